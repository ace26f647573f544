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
)

// Match says which held nodes a give-back applies to.
type Match struct {
	// Kinds, when set, are the interruption kinds (the node's
	// drainpipe.dev/kind) the give-back is for; a node held for another
	// kind stays as it is.
	Kinds []string
	// EventID, when set, must equal the node's drainpipe.dev/event-id.
	EventID string
	// Running says the instance runs again: even a node left held (for
	// another kind or event) loses Drainpipe's out-of-service taint, which
	// would otherwise evict everything from its live kubelet.
	Running bool
	// RestoreTime, when set, is the event time of the restore asking for
	// the give-back: a node taken for a threat announced at or after it
	// stays held (the restore was overtaken on its way).
	RestoreTime time.Time
	// DryRun sends the patch as an API-server dry run: the answer is the
	// same, nothing is written (`drainpipe uncordon --dry-run`).
	DryRun bool
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
		why := leave(node, g.Marks, match)
		if why != "" && !(match.Running && g.Marks.OutOfSvc && !g.Marks.Karpenter) {
			g.Reason = why
			return g, nil
		}
		p, changed := uncordonPatch(node, g.Marks)
		if why != "" {
			g.Reason = why + "; its out-of-service taint removed (the instance runs)"
			p, changed = outOfServicePatch(node)
		}
		body, err := json.Marshal(p)
		if err != nil {
			return g, fmt.Errorf("encoding node patch: %w", err)
		}
		opts := metav1.PatchOptions{}
		if match.DryRun {
			opts.DryRun = []string{metav1.DryRunAll}
		}
		_, err = client.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, body, opts)
		if err == nil {
			g.Back, g.Changed = why == "", changed
			return g, nil
		}
		if !apierrors.IsConflict(err) || attempt == cordonAttempts {
			return g, fmt.Errorf("patching node %s: %w", name, err)
		}
	}
}

// leave says why a node must not be given back; empty when it may.
func leave(node *corev1.Node, m Marks, match Match) string {
	switch {
	case !m.Held() && !hasDrainpipeAnnotation(node):
		return "node carries no Drainpipe marks"
	case m.Karpenter:
		return "Karpenter is disrupting the node (" + KarpenterDisruptedTaint + " taint): it is Karpenter's to give back"
	case len(match.Kinds) > 0 && !slices.Contains(match.Kinds, m.Kind):
		return fmt.Sprintf("node is held for %s, not for %s", orNone(m.Kind), strings.Join(match.Kinds, " or "))
	case match.EventID != "" && m.EventID != match.EventID:
		return fmt.Sprintf("node is held for event %s, not %s", orNone(m.EventID), match.EventID)
	}
	return overtaken(m, match.RestoreTime)
}

// overtaken says why a restore dated at is older than the threat the node
// is held for; empty when it is newer, or either time is unknown. A node
// held by a release that did not record the threat's time is compared
// with its first cordon (AnnotationFirstSeen), which came after the
// threat's event: a restore dated before it cannot have ended that threat.
func overtaken(m Marks, at time.Time) string {
	mark, stamp := "threat", m.ThreatTime
	threat, err := time.Parse(time.RFC3339Nano, stamp)
	if err != nil {
		mark, stamp = "first cordon", m.Since
		threat, err = time.Parse(time.RFC3339Nano, stamp)
	}
	if at.IsZero() || err != nil || at.After(threat) {
		return ""
	}
	return fmt.Sprintf("overtaken: the restore's event time %s is not after that of the %s the node is held for (%s, %s)",
		at.UTC().Format(time.RFC3339Nano), mark, orNone(m.Kind), stamp)
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
	if m.record != nil && m.record.Unschedulable && node.Spec.Unschedulable {
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

// outOfServicePatch removes only Drainpipe's out-of-service taint and its
// annotation.
func outOfServicePatch(node *corev1.Node) (restorePatch, []string) {
	p := restorePatch{Metadata: restoreMeta{ResourceVersion: node.ResourceVersion,
		Annotations: map[string]*string{AnnotationOutOfService: nil}}}
	taints := slices.DeleteFunc(slices.Clone(node.Spec.Taints), func(t corev1.Taint) bool { return t.Key == OutOfServiceTaintKey })
	p.Spec = &restoreSpec{Taints: &taints}
	return p, []string{"out-of-service taint"}
}
