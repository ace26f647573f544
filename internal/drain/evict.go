package drain

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
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

// graceFor is the grace to send for t at now. An ordinary pod's grace ends
// before the critical wave's reserve begins, while there is still a second
// to give before it; a critical pod's ends a safety margin before the
// deadline.
func (c Config) graceFor(t *target, deadline, now time.Time) *int64 {
	margin := c.SafetyMargin
	if !t.critical && !deadline.IsZero() {
		if m := max(c.CriticalReserve, margin); deadline.Sub(now)-m >= minGraceSeconds*time.Second {
			margin = m
		}
	}
	return t.sendGrace(deadline, now, margin)
}

// sendGrace is the grace to send for t: clampGrace's, or the capped grace
// when the pod's own would otherwise apply.
func (t *target) sendGrace(deadline, now time.Time, margin time.Duration) *int64 {
	g := clampGrace(t.grace, deadline, now, margin)
	if g == nil && t.capped {
		capped := t.grace
		return &capped
	}
	return g
}

// backoff is the wait before retry attempt n (0-based): exponential from
// initial, capped at most, with "equal jitter" (between half and all of
// it) so refused evictions on many pods do not retry in lockstep.
func backoff(n int, initial, most time.Duration, rnd func() float64) time.Duration {
	// d never exceeds most, so doubling cannot overflow; 63 doublings
	// bring any positive initial up to most.
	d := min(initial, most)
	for range min(n, 63) {
		d = min(2*d, most)
	}
	half := d / 2
	return half + time.Duration(rnd()*float64(d-half))
}

// retryWait is how long to wait before the next attempt: the backoff, or
// the server's Retry-After when that is longer.
func (c Config) retryWait(attempt int, err error) time.Duration {
	wait := backoff(attempt, c.BackoffInitial, c.BackoffMax, rand.Float64)
	if s, ok := apierrors.SuggestsClientDelay(err); ok {
		wait = max(wait, time.Duration(s)*time.Second)
	}
	return wait
}

func graceSeconds(grace *int64) int64 {
	if grace == nil {
		return -1
	}
	return *grace
}

// sendEviction posts one eviction with client-go's own retries off: on a
// 429 or 5xx carrying Retry-After, client-go would sleep and re-send the
// same body (the same grace) up to ten times, past any deadline. The
// caller's loop retries instead, with a fresh grace.
func (r *run) sendEviction(ctx context.Context, t *target, grace *int64) error {
	ev := &policyv1.Eviction{
		ObjectMeta: metav1.ObjectMeta{Namespace: t.ns, Name: t.name},
		DeleteOptions: &metav1.DeleteOptions{
			GracePeriodSeconds: grace,
			Preconditions:      &metav1.Preconditions{UID: &t.uid},
		},
	}
	pods := r.d.client.CoreV1()
	rc, ok := pods.RESTClient().(*rest.RESTClient)
	if !ok || rc == nil {
		// A fake clientset has no REST client and no retries either.
		return pods.Pods(t.ns).EvictV1(ctx, ev)
	}
	return rc.Post().Namespace(t.ns).Resource("pods").Name(t.name).SubResource("eviction").
		MaxRetries(0).Body(ev).Do(ctx).Error()
}

// confirm reads the pod after a 409: the same UID means the pod is still
// there (the eviction raced with an update) and is retried; another UID
// or none means the pod we saw is gone.
func (r *run) confirm(ctx context.Context, t *target) (outcome, error) {
	p, err := r.d.client.CoreV1().Pods(t.ns).Get(ctx, t.name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return outGone, nil
	case err != nil:
		return outRetry, fmt.Errorf("reading pod after a conflict: %w", err)
	case p.UID != t.uid:
		return outGone, nil
	}
	return outRetry, nil
}

// evict evicts t until the API accepts, the pod goes, or the Run's stop
// context ends (after at least one attempt: a late start still sends every
// pod its SIGTERM). Requests use r.ctx, the caller's budget.
func (r *run) evict(t *target) {
	ctx, stop := r.ctx, r.stop
	log := r.log.With(slog.String("pod", t.key))
	// refused: the last attempt was refused by a budget. Only a first
	// refusal (in this Run, or after an error) may follow a grant whose
	// deletion was cut short; later ones are not checked again.
	refused := false
	r.announce(t)
	if !r.awaitNotice(t) {
		return
	}
	for attempt := 0; ; attempt++ {
		if r.left(t) {
			r.settle(t, stateGone, "")
			return
		}
		if !r.yield() {
			return
		}
		if err := r.acquire(ctx); err != nil {
			return
		}
		var err error
		var out outcome
		var grace *int64
		if r.deleteDue(t) {
			grace, err = r.deleteAtDeadline(ctx, t)
			switch out = classify(err); out {
			case outEvicted:
				out = outDeleted
			case outGone, outConflict:
			default:
				// Keep retrying the eviction and the delete until the
				// deadline: a refused delete is no reason to give up.
				out = outRetry
			}
		} else {
			done, perr := r.d.cfg.Pace.Wait(ctx, Place{Urgent: !r.req.Deadline.IsZero(), Depth: r.chains.depth(t.chain), Retry: refused})
			if perr != nil {
				r.release()
				return
			}
			grace = r.d.cfg.graceFor(t, r.req.Deadline, r.d.now()) // at the moment of sending
			err = r.sendEviction(ctx, t, grace)
			done(err)
			out = classify(err)
			if out == outBlocked && !refused {
				out, err = r.finishGranted(ctx, t, grace, err)
			}
			refused = out == outBlocked
		}
		r.release()
		if out == outConflict {
			var cerr error
			if out, cerr = r.confirm(ctx, t); cerr != nil {
				err = cerr
			}
		}
		if r.settleOutcome(t, out, err, graceSeconds(grace), attempt, log) {
			return
		}
		wait := time.NewTimer(r.nextTry(t, attempt, err))
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
