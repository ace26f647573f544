package drain

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// settleOutcome records what an attempt on t led to, logs and emits it,
// and reports whether t needs no further attempt.
func (r *run) settleOutcome(t *target, out outcome, err error, gs int64, attempt int, log *slog.Logger) bool {
	ev := Event{Node: r.req.Node, Pod: t.key, PodUID: string(t.uid), GraceSeconds: gs}
	switch out {
	case outEvicted, outDeleted, outFinished:
		s, typ, msg := stateEvicted, EventEvicted, "pod evicted"
		switch out {
		case outDeleted:
			s, typ, msg = stateDeleted, EventDeleted, "pod deleted at the deadline: a disruption budget still blocked it"
			ev.Detail = "deleted at the deadline past a disruption budget"
		case outFinished:
			s, msg = stateGranted, "pod deleted: "+GrantFinishedReason
			ev.Detail = GrantFinishedReason
		}
		log.Info(msg, slog.Int64("grace_seconds", gs), slog.Bool("critical", t.critical), slog.Int("attempts", attempt+1))
		r.accepted(t, s, gs)
		ev.Type = typ
		r.d.emit(ev)
		return true
	case outGone:
		log.Debug("pod already gone")
		r.settle(t, stateGone, "")
		return true
	case outNSGoing:
		log.Info("namespace terminating; waiting for the pod to go")
		r.settle(t, stateWaiting, "")
		return true
	case outBlocked:
		r.refused(t)
		if r.settle(t, stateBlocked, err.Error()) {
			log.Info("eviction blocked by disruption budget; retrying", slog.String("error", err.Error()))
			ev.Type, ev.Detail = EventBlocked, err.Error()
			r.d.emit(ev)
		}
	case outRetry:
		if r.ctx.Err() != nil {
			return true
		}
		if err != nil {
			log.Debug("eviction failed; retrying", slog.String("error", err.Error()), slog.Int("attempt", attempt+1))
			r.note(t, err.Error())
		}
	case outFailed:
		log.Warn("eviction refused", slog.String("error", err.Error()))
		r.settle(t, stateFailed, err.Error())
		ev.Type, ev.Detail = EventFailed, err.Error()
		r.d.emit(ev)
		return true
	}
	return false
}

// nextTry is the wait before t's next attempt: the retry wait, cut short
// when a deadline delete falls due sooner.
func (r *run) nextTry(t *target, attempt int, err error) time.Duration {
	wait := r.d.cfg.retryWait(attempt, err)
	if at, ok := r.deleteAt(); ok && r.blocked(t) {
		wait = min(wait, max(at.Sub(r.d.now()), 0))
	}
	return wait
}

// deleteAt is when pods a budget still blocks are deleted: two safety
// margins before a hard deadline, so that a grace of about one margin
// still ends a margin before the instance does.
func (r *run) deleteAt() (time.Time, bool) {
	if !r.d.cfg.DeadlineDelete || r.req.Deadline.IsZero() {
		return time.Time{}, false
	}
	return r.req.Deadline.Add(-2 * r.d.cfg.SafetyMargin), true
}

// deleteDue reports whether t, blocked by a budget, is to be deleted now.
func (r *run) deleteDue(t *target) bool {
	at, ok := r.deleteAt()
	return ok && r.blocked(t) && !r.d.now().Before(at)
}

// deleteAtDeadline deletes t with what grace is left: the instance goes
// anyway, and a delete at least sends SIGTERM in time.
func (r *run) deleteAtDeadline(ctx context.Context, t *target) (*int64, error) {
	grace := t.sendGrace(r.req.Deadline, r.d.now(), r.d.cfg.SafetyMargin)
	if err := r.deletePod(ctx, t, grace); err != nil {
		return grace, fmt.Errorf("deleting pod at the deadline: %w", err)
	}
	return grace, nil
}

// deletePod deletes t, and only t: the UID precondition spares a later pod
// of the same name.
func (r *run) deletePod(ctx context.Context, t *target, grace *int64) error {
	if !r.req.Deadline.IsZero() {
		// client-go may retry a throttled delete by itself: not past the deadline.
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, r.req.Deadline)
		defer cancel()
	}
	return r.d.client.CoreV1().Pods(t.ns).Delete(ctx, t.name, metav1.DeleteOptions{
		GracePeriodSeconds: grace,
		Preconditions:      &metav1.Preconditions{UID: &t.uid},
	})
}
