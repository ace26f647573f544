package drain

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/hold"
)

// cordonAttempts bounds retries on write conflicts with the kubelet or other
// controllers updating the node.
const cordonAttempts = 5

// nodePatch is a JSON merge patch. It carries the node's resourceVersion
// because a merge patch replaces the whole taint list: a concurrent change
// then fails with a conflict instead of being overwritten.
type nodePatch struct {
	Metadata patchMeta  `json:"metadata"`
	Spec     *patchSpec `json:"spec,omitempty"`
}

type patchMeta struct {
	ResourceVersion string            `json:"resourceVersion"`
	Labels          map[string]string `json:"labels,omitempty"`
	Annotations     map[string]string `json:"annotations,omitempty"`
}

type patchSpec struct {
	Unschedulable bool           `json:"unschedulable,omitempty"`
	Taints        []corev1.Taint `json:"taints,omitempty"`
}

// cordon makes the node unschedulable, tainted, labelled and annotated in
// one patch, and sends nothing when the node already is. It returns the
// drain report the node kept. A missing node is an error for which
// apierrors.IsNotFound holds.
func (d *Drainer) cordon(ctx context.Context, req Request, log *slog.Logger) (Summary, error) {
	read := req.Read
	if read != nil && read.Name != req.Node {
		read = nil
	}
	if read != nil && req.Cordoned {
		prev, _ := ReadSummary(read)
		return prev, nil
	}
	for attempt := 1; ; attempt++ {
		node := read
		if node == nil {
			var err error
			if node, err = d.client.CoreV1().Nodes().Get(ctx, req.Node, metav1.GetOptions{}); err != nil {
				return Summary{}, fmt.Errorf("getting node: %w", err)
			}
		}
		prev, _ := ReadSummary(node)
		p, changed := cordonPatch(node, req, d.cfg, d.now())
		if len(changed) == 0 {
			log.Info("node already cordoned")
			d.emit(Event{Type: EventCordoned, Node: req.Node, Detail: "unchanged", GraceSeconds: -1})
			return prev, nil
		}
		body, err := json.Marshal(p)
		if err != nil {
			return prev, fmt.Errorf("encoding node patch: %w", err)
		}
		_, err = d.client.CoreV1().Nodes().Patch(ctx, req.Node, types.MergePatchType, body, patchOptions())
		if err == nil {
			log.Info("node cordoned", slog.Any("changed", changed), slog.String("taint_effect", d.cfg.TaintEffect))
			d.emit(Event{Type: EventCordoned, Node: req.Node, GraceSeconds: -1})
			return prev, nil
		}
		if !apierrors.IsConflict(err) || attempt == cordonAttempts {
			return prev, fmt.Errorf("patching node: %w", err)
		}
		if read != nil { // the caller's copy was old: read it now, no wait
			read = nil
			attempt--
			continue
		}
		log.Debug("node changed while cordoning; retrying", slog.Int("attempt", attempt))
		// The kubelet and controllers update nodes often: let them finish.
		if !d.sleep(ctx, backoff(attempt-1, d.cfg.BackoffInitial, d.cfg.BackoffMax, rand.Float64)) {
			return prev, fmt.Errorf("patching node: %w", ctx.Err())
		}
	}
}

// cordonPatch returns the patch that brings node to the cordoned state and
// the names of what it changes; none means the node is already there.
func cordonPatch(node *corev1.Node, req Request, cfg Config, now time.Time) (nodePatch, []string) {
	p := nodePatch{Metadata: patchMeta{ResourceVersion: node.ResourceVersion}}
	var changed []string
	spec := &patchSpec{}
	if !node.Spec.Unschedulable {
		spec.Unschedulable = true
		changed = append(changed, "unschedulable")
	}
	if taints, ok := withTaint(node.Spec.Taints, req.Kind, corev1.TaintEffect(cfg.TaintEffect), now); !ok {
		spec.Unschedulable = true // keep the field in a patch that rewrites the spec
		spec.Taints = taints
		changed = append(changed, "taint")
	}
	if len(changed) > 0 {
		p.Spec = spec
	}
	if cfg.ExcludeFromLB && node.Labels[ExcludeFromLBLabel] != "true" {
		p.Metadata.Labels = map[string]string{ExcludeFromLBLabel: "true"}
		changed = append(changed, "label")
	}
	p.Metadata.Labels, changed = heldLabel(p.Metadata.Labels, node.Labels, changed)
	want := map[string]string{AnnotationKind: req.Kind}
	if req.EventID != "" {
		want[AnnotationEventID] = req.EventID
	}
	deadline := req.Deadline
	if !deadline.IsZero() && laterForSameEvent(node, req) {
		deadline, _ = time.Parse(annotationTimeLayout, node.Annotations[AnnotationDeadline])
	} else if !deadline.IsZero() {
		want[AnnotationDeadline] = deadline.UTC().Format(annotationTimeLayout)
	} else if !req.PassedDeadline.IsZero() {
		want[AnnotationDeadline] = req.PassedDeadline.UTC().Format(annotationTimeLayout)
	}
	if !req.End.IsZero() {
		want[AnnotationThreatEnd] = req.End.UTC().Format(annotationTimeLayout)
	}
	if newerThreat(node, req.EventTime) {
		want[AnnotationThreatTime] = req.EventTime.UTC().Format(time.RFC3339Nano)
	}
	want[AnnotationInterruption] = interruptionOf(req, deadline).encode()
	if _, ok := node.Annotations[AnnotationFirstSeen]; !ok {
		want[AnnotationFirstSeen] = now.UTC().Format(annotationTimeLayout)
	}
	holds := readHolds(node.Annotations)
	for _, h := range requestHolds(req, deadline, now) {
		holds, _ = holds.With(h)
	}
	want[AnnotationHolds] = holds.Encode()
	for k, v := range want {
		if got, ok := node.Annotations[k]; ok && got == v {
			continue
		}
		if p.Metadata.Annotations == nil {
			p.Metadata.Annotations = map[string]string{}
			changed = append(changed, "annotations")
		}
		p.Metadata.Annotations[k] = v
	}
	changed = recordRestore(node, cfg, &p, changed)
	return p, changed
}

// laterForSameEvent reports whether the node already records an earlier
// deadline for req's event: a stopped instance's drain comes back with a
// later one each time, and the first written stands.
func laterForSameEvent(node *corev1.Node, req Request) bool {
	if node.Annotations[AnnotationEventID] != req.EventID {
		return false
	}
	cur, err := time.Parse(annotationTimeLayout, node.Annotations[AnnotationDeadline])
	return err == nil && !req.Deadline.Truncate(time.Second).Before(cur)
}

// newerThreat reports whether t is later than the threat time the node
// records (or it records none): only the newest threat's time is kept.
func newerThreat(node *corev1.Node, t time.Time) bool {
	if t.IsZero() {
		return false
	}
	cur, err := time.Parse(time.RFC3339Nano, node.Annotations[AnnotationThreatTime])
	return err != nil || t.After(cur)
}

// withTaint returns taints with exactly one taint under TaintKey, carrying
// value and effect, and whether taints already were so.
func withTaint(taints []corev1.Taint, value string, effect corev1.TaintEffect, now time.Time) ([]corev1.Taint, bool) {
	found := 0
	ok := false
	out := make([]corev1.Taint, 0, len(taints)+1)
	for _, t := range taints {
		if t.Key != TaintKey {
			out = append(out, t)
			continue
		}
		found++
		ok = t.Value == value && t.Effect == effect
	}
	if found == 1 && ok {
		return taints, true
	}
	t := corev1.Taint{Key: TaintKey, Value: value, Effect: effect}
	if effect == corev1.TaintEffectNoExecute {
		// The API records when NoExecute taints were added, for tolerationSeconds.
		added := metav1.NewTime(now.Truncate(time.Second))
		t.TimeAdded = &added
	}
	return append(out, t), false
}

// requestHolds are the holds req takes: its own list, or the one its
// fields describe; each taken by req.By, now.
func requestHolds(req Request, deadline time.Time, now time.Time) []hold.Hold {
	if len(req.Holds) > 0 {
		out := slices.Clone(req.Holds)
		for i := range out {
			if out[i].Since == "" {
				out[i].Since = hold.Stamp(now)
			}
			if out[i].By == "" {
				out[i].By = req.By
			}
		}
		return out
	}
	if deadline.IsZero() {
		deadline = req.PassedDeadline
	}
	h := hold.Of(event.Interruption{Kind: event.Kind(req.Kind), EventID: req.EventID, Time: req.EventTime,
		Deadline: deadline, End: req.End}, req.By, now)
	return []hold.Hold{h}
}
