package drain

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/hold"
)

// Match says which of a node's holds a give-back ends; the zero Match
// ends them all (an operator's `drainpipe uncordon`). The node itself is
// given back only when no hold is left.
type Match struct {
	// Kinds, when set, are the interruption kinds of the holds to end.
	Kinds []string
	// EventID, when set, must equal the hold's id (hold.Hold.ID).
	EventID string
	// Holds, when set, are the exact holds to end.
	Holds []hold.Key
	// By, when set, must equal the delivery that took the hold
	// (hold.Hold.By).
	By string
	// Running says the instance runs again: even a node left held (for
	// another threat) loses Drainpipe's out-of-service taint, which
	// would otherwise evict everything from its live kubelet, and a node
	// Drainpipe marked without any hold left is given back.
	Running bool
	// RestoreTime, when set, is the event time of the restore asking for
	// the give-back: a hold taken for a threat announced at or after it
	// stays (the restore was overtaken on its way).
	RestoreTime time.Time
	// DryRun sends the patch as an API-server dry run: the answer is the
	// same, nothing is written (`drainpipe uncordon --dry-run`).
	DryRun bool
}

// ends is m as the hold set reads it.
func (m Match) ends() hold.Ends {
	return hold.Ends{Kinds: m.Kinds, ID: m.EventID, Keys: m.Holds, Before: m.RestoreTime, By: m.By}
}

// all reports a Match that ends every hold.
func (m Match) all() bool {
	return len(m.Kinds) == 0 && m.EventID == "" && len(m.Holds) == 0 && m.By == "" && m.RestoreTime.IsZero()
}

// Given says what Uncordon did.
type Given struct {
	Node string
	// Back is true when the node was given back; otherwise Reason says
	// why it was left as it is.
	Back    bool
	Reason  string
	Changed []string // what the give-back undid
	Marks   Marks    // the node's marks before
	// Ended are the holds the give-back ended; Kept those that stand and
	// keep the node (Back is then false).
	Ended, Kept hold.Set
}

// restorePatch is a JSON merge patch undoing a cordon: a nil value deletes
// a label or annotation. Like the cordon, it carries the resourceVersion
// so a concurrent change to the taint list fails instead of being lost.
type restorePatch struct {
	Metadata restoreMeta  `json:"metadata"`
	Spec     *restoreSpec `json:"spec,omitempty"`
}

type restoreMeta struct {
	ResourceVersion string             `json:"resourceVersion"`
	Labels          map[string]*string `json:"labels,omitempty"`
	Annotations     map[string]*string `json:"annotations,omitempty"`
}

type restoreSpec struct {
	Unschedulable *bool           `json:"unschedulable,omitempty"`
	Taints        *[]corev1.Taint `json:"taints,omitempty"`
}

// Uncordon gives a node back exactly as Drainpipe's cordon (and its
// out-of-service taint) took it: it removes Drainpipe's taints and
// annotations, makes the node schedulable only if Drainpipe made it
// unschedulable, and puts the exclusion label back as it was. It leaves
// the node alone when it carries no Drainpipe marks, when match does not
// fit, or when Karpenter is disrupting it. It reads the node once and
// writes at most one patch (retried on conflicts); a missing node is an
// error for which apierrors.IsNotFound holds.
func Uncordon(ctx context.Context, client kubernetes.Interface, name string, match Match) (Given, error) {
	return uncordon(ctx, client, name, nil, match)
}

// UncordonRead is Uncordon for a node the caller has just read (the
// sweep's LIST): its first patch is built from that copy, guarded by its
// resourceVersion, so a give-back costs one PATCH and no GET unless the
// node changed since (a conflict reads it again).
func UncordonRead(ctx context.Context, client kubernetes.Interface, node *corev1.Node, match Match) (Given, error) {
	return uncordon(ctx, client, node.Name, node, match)
}

func uncordon(ctx context.Context, client kubernetes.Interface, name string, read *corev1.Node, match Match) (Given, error) {
	for attempt := 1; ; attempt++ {
		node := read
		if attempt > 1 || node == nil {
			var err error
			if node, err = client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{}); err != nil {
				return Given{Node: name}, fmt.Errorf("getting node %s: %w", name, err)
			}
		}
		g := Given{Node: name, Marks: ReadMarks(node)}
		p, changed, why := plan(node, &g, match)
		if p == nil {
			g.Reason = why
			return g, nil
		}
		body, err := json.Marshal(p)
		if err != nil {
			return g, fmt.Errorf("encoding node patch: %w", err)
		}
		opts := patchOptions()
		if match.DryRun {
			opts.DryRun = []string{metav1.DryRunAll}
		}
		_, err = client.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, body, opts)
		if err == nil {
			g.Back, g.Changed, g.Reason = len(g.Kept) == 0, changed, why
			return g, nil
		}
		if !apierrors.IsConflict(err) || attempt == cordonAttempts {
			return g, fmt.Errorf("patching node %s: %w", name, err)
		}
	}
}

// plan decides what a give-back does to node: the patch (nil: nothing)
// and what it changes, with why it ends less than the whole hold. It
// fills g's Ended and Kept.
func plan(node *corev1.Node, g *Given, match Match) (*restorePatch, []string, string) {
	m := g.Marks
	if !m.Held() && !hasDrainpipeAnnotation(node) {
		return nil, nil, "node carries no Drainpipe marks"
	}
	if m.Karpenter {
		return nil, nil, "Karpenter is disrupting the node (" + KarpenterDisruptedTaint + " taint): it is Karpenter's to give back"
	}
	ended, kept, overtaken := m.Holds.Split(match.ends())
	g.Ended, g.Kept = ended, kept
	whole := len(kept) == 0 && (len(ended) > 0 || match.Running || match.all())
	if whole {
		p, changed := uncordonPatch(node, m)
		return &p, changed, ""
	}
	why := "node stays held for " + kept.String()
	if len(ended) == 0 {
		why = stays(m, match, overtaken)
	} else {
		why = "ended the hold of " + ended.String() + "; " + why
	}
	oos := match.Running && m.OutOfSvc
	if len(ended) == 0 && !oos {
		return nil, nil, why
	}
	p, changed := keepPatch(node, kept, oos)
	if oos {
		why += "; its out-of-service taint removed (the instance runs)"
	}
	return &p, changed, why
}

// stays says why a give-back ended none of the node's holds.
func stays(m Marks, match Match, overtaken string) string {
	if overtaken != "" {
		return "overtaken: " + overtaken
	}
	if len(m.Holds) == 0 {
		return "node holds no threat"
	}
	if match.EventID != "" {
		ids := make([]string, 0, len(m.Holds))
		for _, h := range m.Holds {
			ids = append(ids, orNone(h.ID))
		}
		return fmt.Sprintf("node is held for event %s (%s), not %s", strings.Join(ids, ", "), m.Holds, match.EventID)
	}
	if len(match.Kinds) > 0 {
		return fmt.Sprintf("node is held for %s, not for %s", m.Holds, strings.Join(match.Kinds, " or "))
	}
	return fmt.Sprintf("node is held for %s, none of them this give-back's", m.Holds)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// uncordonPatch undoes Drainpipe's marks on node and names what it undoes.
func uncordonPatch(node *corev1.Node, m Marks) (restorePatch, []string) {
	p := restorePatch{Metadata: restoreMeta{ResourceVersion: node.ResourceVersion}}
	var changed []string
	spec := &restoreSpec{}
	if m.Cordoned { // Drainpipe's cordon, still as it set it (ReadMarks)
		f := false
		spec.Unschedulable = &f
		changed = append(changed, "unschedulable")
	}
	taints := make([]corev1.Taint, 0, len(node.Spec.Taints))
	for _, t := range node.Spec.Taints {
		if t.Key == TaintKey || (t.Key == OutOfServiceTaintKey && m.OutOfSvc) {
			continue
		}
		taints = append(taints, t)
	}
	if len(taints) != len(node.Spec.Taints) {
		spec.Taints = &taints
		changed = append(changed, "taint")
	}
	if spec.Unschedulable != nil || spec.Taints != nil {
		p.Spec = spec
	}
	if m.record != nil && m.record.Label {
		if v, ok := node.Labels[ExcludeFromLBLabel]; ok && v == "true" {
			p.Metadata.Labels = map[string]*string{ExcludeFromLBLabel: m.record.LabelPrevious}
			changed = append(changed, "label")
		}
	}
	if _, ok := node.Labels[LabelHeld]; ok {
		if p.Metadata.Labels == nil {
			p.Metadata.Labels = map[string]*string{}
		}
		p.Metadata.Labels[LabelHeld] = nil
		changed = append(changed, "held label")
	}
	for k := range node.Annotations {
		if slices.Contains(ownAnnotations, k) { // drainpipe.dev/ keys of others stay
			if p.Metadata.Annotations == nil {
				p.Metadata.Annotations = map[string]*string{}
				changed = append(changed, "annotations")
			}
			p.Metadata.Annotations[k] = nil
		}
	}
	return p, changed
}

// keepPatch rewrites the node's holds to kept (the newest of them in the
// single-hold marks), and removes Drainpipe's out-of-service taint and its
// mark when oos.
func keepPatch(node *corev1.Node, kept hold.Set, oos bool) (restorePatch, []string) {
	p := restorePatch{Metadata: restoreMeta{ResourceVersion: node.ResourceVersion, Annotations: map[string]*string{}}}
	var changed []string
	set := func(k, v string) {
		if cur, ok := node.Annotations[k]; ok && cur == v {
			return
		}
		if v == "" {
			if _, ok := node.Annotations[k]; !ok {
				return
			}
			p.Metadata.Annotations[k] = nil
			return
		}
		p.Metadata.Annotations[k] = &v
	}
	set(AnnotationHolds, kept.Encode())
	if h, ok := kept.Newest(); ok {
		set(AnnotationKind, h.Kind)
		set(AnnotationEventID, h.ID)
		set(AnnotationThreatTime, h.Time)
		set(AnnotationDeadline, h.Deadline)
		set(AnnotationThreatEnd, h.End)
	}
	if len(p.Metadata.Annotations) > 0 {
		changed = append(changed, "holds")
	}
	if oos {
		p.Metadata.Annotations[AnnotationOutOfService] = nil
		taints := slices.DeleteFunc(slices.Clone(node.Spec.Taints), func(t corev1.Taint) bool { return t.Key == OutOfServiceTaintKey })
		p.Spec = &restoreSpec{Taints: &taints}
		changed = append(changed, "out-of-service taint")
	}
	return p, changed
}
