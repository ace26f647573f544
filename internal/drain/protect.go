package drain

import (
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// ProtectedReason is the Detail of EventDeleted for a protected pod.
const ProtectedReason = "karpenter.sh/do-not-disrupt: deleted at the latest moment its grace period still fits before the deadline"

// protection reads pod's do-not-disrupt annotation: whether it protects
// the pod at now, and until when (zero: for ever). A value that is
// neither "true" nor a duration protects for ever: when in doubt, keep.
func protection(pod *corev1.Pod, now time.Time) (bool, time.Time) {
	v, ok := pod.Annotations[AnnotationDoNotDisrupt]
	if !ok || v == "false" {
		return false, time.Time{}
	}
	d, err := time.ParseDuration(v)
	if v == "true" || err != nil || d < 0 {
		return true, time.Time{}
	}
	start := pod.CreationTimestamp.Time
	if pod.Status.StartTime != nil {
		start = pod.Status.StartTime.Time
	}
	until := start.Add(d)
	return now.Before(until), until
}

// deleteProtectedAt is when a protected pod with grace goes under
// deadline: the latest moment its grace still ends a safety margin before.
func deleteProtectedAt(deadline time.Time, grace int64, margin time.Duration) time.Time {
	return deadline.Add(-time.Duration(grace)*time.Second - margin)
}

// holdProtected keeps a protected pod until its protection ends (then
// evicts it like any pod) or, under a deadline, until the latest moment
// its grace fits (then deletes it), whichever comes first.
func (r *run) holdProtected(t *target) {
	r.announce(t)
	var at time.Time
	if !r.req.Deadline.IsZero() {
		at = deleteProtectedAt(r.req.Deadline, t.grace, r.d.cfg.SafetyMargin)
	}
	release := !t.protectedUntil.IsZero() && (at.IsZero() || t.protectedUntil.Before(at))
	wake := at
	if release {
		wake = t.protectedUntil
	}
	var timer <-chan time.Time
	if !wake.IsZero() {
		tm := time.NewTimer(max(wake.Sub(r.d.now()), 0))
		defer tm.Stop()
		timer = tm.C
	}
	select {
	case <-r.stop.Done():
		return
	case <-t.gone:
		r.settle(t, stateGone, "")
		return
	case <-timer:
	}
	r.mu.Lock()
	t.protected = false
	r.broadcast()
	r.mu.Unlock()
	if release {
		r.evict(t)
		return
	}
	log := r.log.With(slog.String("pod", t.key))
	if err := r.acquire(r.ctx); err != nil {
		return
	}
	grace := t.sendGrace(r.req.Deadline, r.d.now(), r.d.cfg.SafetyMargin)
	err := r.deletePod(r.ctx, t, grace)
	r.release()
	out := classify(err)
	if out == outEvicted {
		out = outDeleted
	}
	if out == outDeleted {
		log.Info("protected pod deleted at the latest moment its grace fits", slog.Int64("grace_seconds", graceSeconds(grace)))
		r.accepted(t, stateDeleted, graceSeconds(grace))
		r.d.emit(Event{Type: EventDeleted, Node: r.req.Node, Pod: t.key, PodUID: string(t.uid), Detail: ProtectedReason,
			GraceSeconds: graceSeconds(grace)})
		return
	}
	// Gone, or refused: the ordinary path settles or retries it.
	r.evict(t)
}
