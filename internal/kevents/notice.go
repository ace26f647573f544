package kevents

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/drainpipe/drainpipe/internal/drain"
)

// ReasonInterruptionNotice is the warning a pod gets before its eviction.
const ReasonInterruptionNotice = "InterruptionNotice"

// Announce writes a wrapped run's warning event on the pod, and returns
// once it and the node's start event are written (each bounded by
// Options.Timeout), so both precede the pod's eviction. It fits
// drain.Config.Announce; its writes are bounded by the drain's own
// concurrency, not Options.Workers.
func (r *Recorder) Announce(ctx context.Context, e drain.Event) {
	r.mu.Lock()
	s := r.runs[e.Node]
	r.mu.Unlock()
	if s == nil || e.Pod == "" {
		return
	}
	if s.count() {
		ns, name, _ := strings.Cut(e.Pod, "/")
		ref := corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: ns, Name: name, UID: types.UID(e.PodUID)}
		wctx, cancel := context.WithTimeout(s.ctx, r.opts.Timeout)
		err := r.put(wctx, ns, ref, corev1.EventTypeNormal, ReasonInterruptionNotice, s.req.EventID, noticeMessage(s.req, e))
		cancel()
		if err != nil {
			r.opts.Log.Warn("writing kubernetes event", "object", "Pod/"+name, "reason", ReasonInterruptionNotice, "error", err.Error())
			r.opts.OnError(err)
		}
	}
	if started := s.startedChan(); started != nil {
		select {
		case <-started:
		case <-ctx.Done():
		}
	}
}

// noticeMessage warns a pod; e.Detail is the annotation's value.
func noticeMessage(req drain.Request, e drain.Event) string {
	s := fmt.Sprintf("Node %s is being drained: %s", e.Node, strings.ReplaceAll(req.Kind, "-", " "))
	if req.EventID != "" {
		s += " (event " + req.EventID + ")"
	}
	if !req.Deadline.IsZero() {
		s += "; the instance goes at " + req.Deadline.UTC().Format(time.RFC3339)
	}
	if in, err := drain.ParseInterruption(e.Detail); err == nil && in.EvictAt != "" {
		s += "; this pod is evicted at " + in.EvictAt
	}
	return s + "; annotation " + drain.AnnotationInterruption + " carries the details"
}
