package pipeline

import (
	"context"
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/instance"
	"github.com/drainpipe/drainpipe/internal/policy"
)

// A retried record whose instance has a deadline ahead comes back within
// a third of the time left (whole seconds, at least one), so a backoff
// grown over earlier failures never carries a Spot warning past its two
// minutes; past the deadline, or without one, the backoff is left alone,
// and a pending hook's tighter cap wins.
func TestRetryComesBackBeforeTheDeadline(t *testing.T) {
	tests := []struct {
		name   string
		now    time.Time
		task   handler.Task
		timed  map[string]time.Duration
		within time.Duration
	}{
		{"spot, 90 s left", t0.Add(30 * time.Second), task(policy.ActionCordonAndDrain, 4, spot(t0)), nil, 30 * time.Second},
		{"spot, 10 s left", t0.Add(110 * time.Second), task(policy.ActionCordonAndDrain, 4, spot(t0)), nil, 3 * time.Second},
		{"spot, 2 s left", t0.Add(118 * time.Second), task(policy.ActionCordonAndDrain, 4, spot(t0)), nil, time.Second},
		{"spot, deadline passed", t0.Add(3 * time.Minute), task(policy.ActionCordonAndDrain, 4, spot(t0)), nil, 0},
		{"no deadline", t0, task(policy.ActionCordonAndDrain, 1, stateChange(t0, "stopping")), nil, 0},
		{"spot and a hook of 30 s", t0, task(policy.ActionCordonAndDrain, 1, spot(t0), lifecycleEvent(t0)),
			map[string]time.Duration{"drain": 30 * time.Second}, 15 * time.Second},
		{"spot and a hook of 10 min", t0, task(policy.ActionCordonAndDrain, 1, spot(t0), lifecycleEvent(t0)),
			map[string]time.Duration{"drain": 10 * time.Minute}, 40 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := rigOpts{findErr: errBoom, clock: &fakeClock{now: tt.now}, timeouts: tt.timed}
			if tt.name == "no deadline" {
				stopping := ourInstance()
				stopping.State = "stopping"
				o.instances = map[string]instance.Instance{instID: stopping}
			}
			r := newRig(t, o)
			got := r.actor.Act(context.Background(), tt.task)
			if got.Status != handler.StatusRetry {
				t.Fatalf("Act = {%s %q}, want a retry", statusName(got.Status), got.Reason)
			}
			if got.RetryWithin != tt.within {
				t.Errorf("RetryWithin = %v, want %v (reason %q)", got.RetryWithin, tt.within, got.Reason)
			}
		})
	}
}
