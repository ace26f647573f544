package drain

import (
	"context"
	"log/slog"
	"time"
)

// reportEvicted is the drain report's state while a drain racing a
// deadline has every pod's eviction accepted (or the pod gone) and waits
// only for the pods' grace periods: it needs no more of the cluster's
// rate. The drains that can wait, which yield to the wave's deadlines at
// risk (atRisk), go on from then rather than for the whole grace period
// of the last pod (up to its terminationGracePeriodSeconds, clamped to the
// deadline).
const reportEvicted = "evicted"

// allSent reports whether no target waits for an eviction to be sent or
// accepted. r.mu must be held.
func (r *run) allSent(now time.Time) (bool, time.Time) {
	return r.all(now, func(t *target) bool {
		return r.settled(t, now) || (t.state != statePending && t.state != stateBlocked)
	})
}

// markSent writes the node's report with the state reportEvicted once
// allSent holds, unless the Run has finished by then (its final report
// follows). It returns once written, or when ctx ends.
func (r *run) markSent(ctx context.Context) {
	if !r.waitFor(ctx, r.allSent) {
		return
	}
	r.mu.Lock()
	finished, _ := r.finished(r.d.now())
	r.mu.Unlock()
	if finished {
		return
	}
	s := Summarize(r.prev, r.req, r.report(), r.d.now())
	s.State = reportEvicted
	if err := r.d.writeReport(ctx, r.req, s); err != nil && ctx.Err() == nil {
		r.log.Debug("drain report (every pod evicted) not written", slog.String("error", err.Error()))
	}
}

// sentMarker starts markSent for a Run racing a deadline; the function it
// returns ends it and waits for it.
func (r *run) sentMarker(stop context.Context) func() {
	if r.req.Deadline.IsZero() {
		return func() {}
	}
	ctx, cancel := context.WithCancel(stop)
	marked := make(chan struct{})
	go func() {
		defer close(marked)
		r.markSent(ctx)
	}()
	return func() {
		cancel()
		<-marked
	}
}
