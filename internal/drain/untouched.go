package drain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ErrTouched says a node was not as CordonUntouched expected (or not
// there): nothing was changed, and the caller reads the node instead.
var ErrTouched = errors.New("node not as expected of one never touched")

// Untouched is what a caller that has not read a node expects of it: the
// node of the instance with ProviderID, as Drainpipe has never touched it
// (schedulable, untainted, no Drainpipe label or annotation), and without
// the labels in Absent (the caller's rules for nodes it leaves to others).
type Untouched struct {
	ProviderID string
	Absent     []string
}

// CordonUntouched cordons req.Node in one request, without reading it
// first, when the node is as u expects; it returns the node as patched.
// The patch is what cordon would send after reading such a node, as a
// JSON Patch whose tests check every field that patch depends on, so the
// API server applies it only to a node in exactly that state (a missing
// node or any difference: ErrTouched, nothing changed). A wave's first
// notices find their nodes so: one round trip to cordon instead of two, in
// the busiest second the control plane has.
func (d *Drainer) CordonUntouched(ctx context.Context, req Request, u Untouched, log *slog.Logger) (*corev1.Node, error) {
	if err := req.validate(); err != nil {
		return nil, err
	}
	if u.ProviderID == "" {
		return nil, fmt.Errorf("cordoning %s unread: no providerID to expect: %w", req.Node, ErrTouched)
	}
	body, changed, err := untouchedPatch(req, u, d.cfg, d.now())
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = d.log
	}
	log = log.With(slog.String("node", req.Node), slog.String("event_id", req.EventID))
	node, err := d.client.CoreV1().Nodes().Patch(ctx, req.Node, types.JSONPatchType, body, patchOptions())
	switch {
	case apierrors.IsNotFound(err) || apierrors.IsInvalid(err) || isUnprocessable(err):
		return nil, fmt.Errorf("cordoning %s unread: %w (%w)", req.Node, ErrTouched, err)
	case err != nil:
		return nil, fmt.Errorf("cordoning %s unread: %w", req.Node, err)
	}
	log.Info("node cordoned", slog.Any("changed", changed), slog.String("taint_effect", d.cfg.TaintEffect),
		slog.Bool("unread", true))
	d.emit(Event{Type: EventCordoned, Node: req.Node, GraceSeconds: -1})
	return node, nil
}

// isUnprocessable reports the API server's answer to a JSON Patch whose
// test failed or whose path is missing (422 without field causes).
func isUnprocessable(err error) bool {
	var status apierrors.APIStatus
	return errors.As(err, &status) && status.Status().Code == 422
}

// jsonOp is one JSON Patch (RFC 6902) operation.
type jsonOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"` // null in a test: the member is absent
}

// untouchedPatch is cordonPatch's patch for a node never touched, with the
// tests that make it apply only to such a node.
func untouchedPatch(req Request, u Untouched, cfg Config, now time.Time) ([]byte, []string, error) {
	pristine := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: req.Node, Labels: map[string]string{}, Annotations: map[string]string{}},
		Spec:       corev1.NodeSpec{ProviderID: u.ProviderID},
	}
	p, changed := cordonPatch(pristine, req, cfg, now)
	ops := []jsonOp{
		{Op: "test", Path: "/spec/providerID", Value: u.ProviderID},
		{Op: "test", Path: "/spec/unschedulable"},
		{Op: "test", Path: "/spec/taints"},
	}
	labels := append(slices.Sorted(maps.Keys(p.Metadata.Labels)), ExcludeFromLBLabel, LabelHeld)
	for _, k := range slices.Compact(slices.Sorted(slices.Values(append(labels, u.Absent...)))) {
		ops = append(ops, jsonOp{Op: "test", Path: "/metadata/labels/" + pointerEscape(k)})
	}
	annotations := append(slices.Sorted(maps.Keys(p.Metadata.Annotations)), ownAnnotations...)
	for _, k := range slices.Compact(slices.Sorted(slices.Values(annotations))) {
		ops = append(ops, jsonOp{Op: "test", Path: "/metadata/annotations/" + pointerEscape(k)})
	}
	if p.Spec != nil {
		if p.Spec.Unschedulable {
			ops = append(ops, jsonOp{Op: "add", Path: "/spec/unschedulable", Value: true})
		}
		if len(p.Spec.Taints) > 0 {
			ops = append(ops, jsonOp{Op: "add", Path: "/spec/taints", Value: p.Spec.Taints})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(p.Metadata.Labels)) {
		ops = append(ops, jsonOp{Op: "add", Path: "/metadata/labels/" + pointerEscape(k), Value: p.Metadata.Labels[k]})
	}
	for _, k := range slices.Sorted(maps.Keys(p.Metadata.Annotations)) {
		ops = append(ops, jsonOp{Op: "add", Path: "/metadata/annotations/" + pointerEscape(k), Value: p.Metadata.Annotations[k]})
	}
	body, err := json.Marshal(ops)
	if err != nil {
		return nil, nil, fmt.Errorf("encoding node patch: %w", err)
	}
	return body, changed, nil
}

// pointerEscape escapes a map key for a JSON Pointer (RFC 6901): "~"
// first, so the "~" of an escaped "/" stays as it is.
func pointerEscape(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}
