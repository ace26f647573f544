package drain

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// clampGrace returns the grace period to send with an eviction: nil to let
// the pod's own period apply, or the time left before deadline less margin
// when that is shorter, in whole seconds and never below minGraceSeconds (a
// zero grace period would delete the pod at once, skipping SIGTERM).
func clampGrace(own int64, deadline, now time.Time, margin time.Duration) *int64 {
	if deadline.IsZero() {
		return nil
	}
	left := int64((deadline.Sub(now) - margin) / time.Second)
	left = max(left, minGraceSeconds)
	if left >= own {
		return nil
	}
	return &left
}

// backoff is the wait before retry attempt n (0-based): exponential from
// initial, capped at most, with "equal jitter" (between half and all of
// it) so refused evictions on many pods do not retry in lockstep.
func backoff(n int, initial, most time.Duration, rnd func() float64) time.Duration {
	d := initial
	for i := 0; i < n && d < most; i++ {
		d *= 2
	}
	d = min(d, most)
	half := d / 2
	return half + time.Duration(rnd()*float64(d-half))
}

// outcome classifies an eviction request's result.
type outcome int

const (
	outEvicted outcome = iota // accepted: the pod is terminating
	outGone                   // no such pod (or a new one under its name)
	outNSGoing                // its namespace is being deleted, and the pod with it
	outBlocked                // a disruption budget refuses for now: retry
	outRetry                  // a transient error: retry
	outFailed                 // retrying cannot help
)

func classify(err error) outcome {
	var status apierrors.APIStatus
	switch {
	case err == nil:
		return outEvicted
	case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		// Conflict: the UID precondition failed, the pod we saw is gone.
		return outGone
	case apierrors.IsForbidden(err) && apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		return outNSGoing
	case isBudgetRefusal(err):
		return outBlocked
	case apierrors.IsTooManyRequests(err), apierrors.IsServerTimeout(err), apierrors.IsTimeout(err),
		apierrors.IsServiceUnavailable(err), apierrors.IsInternalError(err), apierrors.IsUnexpectedServerError(err):
		return outRetry
	case errors.As(err, &status):
		return outFailed
	default:
		// Not from the API server: the connection failed or timed out.
		return outRetry
	}
}

// isBudgetRefusal tells a disruption budget's refusal (429, or 500 when
// several budgets select the pod, or 403 when the budget's bookkeeping is
// behind) from the API server's own throttling.
func isBudgetRefusal(err error) bool {
	if apierrors.HasStatusCause(err, policyv1.DisruptionBudgetCause) {
		return true
	}
	msg := strings.ToLower(err.Error())
	switch {
	case apierrors.IsTooManyRequests(err):
		return strings.Contains(msg, "disruption budget")
	case apierrors.IsInternalError(err), apierrors.IsUnexpectedServerError(err):
		return strings.Contains(msg, "poddisruptionbudget")
	case apierrors.IsForbidden(err):
		return strings.Contains(msg, "poddisruptionbudget")
	}
	return false
}

// evict evicts t until the API accepts, the pod goes, or stop ends (after
// at least one attempt: a late start still sends every pod its SIGTERM).
// Requests use ctx, the caller's budget; retries end with stop.
func (r *run) evict(ctx, stop context.Context, t *target) {
	log := r.log.With(slog.String("pod", t.key))
	uid := t.uid
	for attempt := 0; ; attempt++ {
		if r.left(t) {
			r.settle(t, stateGone, "")
			return
		}
		grace := clampGrace(t.grace, r.req.Deadline, r.d.now(), r.d.cfg.SafetyMargin)
		ev := &policyv1.Eviction{
			ObjectMeta: metav1.ObjectMeta{Namespace: t.ns, Name: t.name},
			DeleteOptions: &metav1.DeleteOptions{
				GracePeriodSeconds: grace,
				Preconditions:      &metav1.Preconditions{UID: &uid},
			},
		}
		if err := r.acquire(ctx); err != nil {
			return
		}
		err := r.d.client.CoreV1().Pods(t.ns).EvictV1(ctx, ev)
		r.release()
		gs := int64(-1)
		if grace != nil {
			gs = *grace
		}
		switch classify(err) {
		case outEvicted:
			log.Info("pod evicted", slog.Int64("grace_seconds", gs), slog.Bool("critical", t.critical), slog.Int("attempts", attempt+1))
			r.settle(t, stateEvicted, "")
			r.d.emit(Event{Type: EventEvicted, Node: r.req.Node, Pod: t.key, PodUID: string(t.uid), GraceSeconds: gs})
			return
		case outGone:
			log.Debug("pod already gone")
			r.settle(t, stateGone, "")
			return
		case outNSGoing:
			log.Info("namespace terminating; waiting for the pod to go")
			r.settle(t, stateWaiting, "")
			return
		case outBlocked:
			if r.settle(t, stateBlocked, err.Error()) {
				log.Info("eviction blocked by disruption budget; retrying", slog.String("error", err.Error()))
				r.d.emit(Event{Type: EventBlocked, Node: r.req.Node, Pod: t.key, PodUID: string(t.uid), Detail: err.Error(), GraceSeconds: gs})
			}
		case outRetry:
			if ctx.Err() != nil {
				return
			}
			log.Debug("eviction failed; retrying", slog.String("error", err.Error()), slog.Int("attempt", attempt+1))
			r.note(t, err.Error())
		case outFailed:
			log.Warn("eviction refused", slog.String("error", err.Error()))
			r.settle(t, stateFailed, err.Error())
			r.d.emit(Event{Type: EventFailed, Node: r.req.Node, Pod: t.key, PodUID: string(t.uid), Detail: err.Error(), GraceSeconds: gs})
			return
		}
		wait := time.NewTimer(backoff(attempt, r.d.cfg.BackoffInitial, r.d.cfg.BackoffMax, rand.Float64))
		select {
		case <-stop.Done():
			wait.Stop()
			return
		case <-t.gone:
			// The pod went while we waited: the next loop settles it.
			wait.Stop()
		case <-wait.C:
		}
	}
}
