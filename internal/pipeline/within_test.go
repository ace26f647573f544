package pipeline

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/policy"
)

// A retry that leaves lifecycle hooks pending asks for the message back
// within half the shortest of their heartbeat timeouts (the configured
// heartbeat cap when a timeout is unknown), so the next delivery heartbeats
// them before they expire; a retry with no hook pending asks nothing.
func TestRetryWithinPendingHooks(t *testing.T) {
	other := lifecycleEvent(t0)
	other.EventID, other.Lifecycle = "asg-2", &event.Lifecycle{ASG: "prod-workers", Hook: "quick", Token: "tok-2",
		Transition: "autoscaling:EC2_INSTANCE_TERMINATING", InstanceID: instID}
	undated := spot(t0) // a deadline caps retries too: TestRetryComesBackBeforeTheDeadline
	undated.Deadline = time.Time{}
	tests := []struct {
		name     string
		timeouts map[string]time.Duration // nil: the hooks cannot tell
		complete error
		drained  bool
		ins      []event.Interruption
		want     time.Duration
	}{
		{"blocked drain, 60s hook", map[string]time.Duration{"drain": time.Minute}, nil, false,
			[]event.Interruption{lifecycleEvent(t0)}, 30 * time.Second},
		{"shortest of two hooks", map[string]time.Duration{"drain": 5 * time.Minute, "quick": 41 * time.Second}, nil, false,
			[]event.Interruption{lifecycleEvent(t0), other}, 20 * time.Second},
		{"timeout unknown: the heartbeat cap", map[string]time.Duration{}, nil, false,
			[]event.Interruption{lifecycleEvent(t0)}, 10 * time.Second},
		{"hooks cannot tell: the heartbeat cap", nil, nil, false,
			[]event.Interruption{lifecycleEvent(t0)}, 10 * time.Second},
		{"drained, completion failed", map[string]time.Duration{"drain": time.Minute}, errBoom, true,
			[]event.Interruption{lifecycleEvent(t0)}, 30 * time.Second},
		{"no hook", map[string]time.Duration{"drain": time.Minute}, nil, false,
			[]event.Interruption{undated}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &fakeDrainer{report: drain.Report{BlockedByPDB: []string{"shop/db-1"}}}
			if tt.drained {
				d.report = drain.Report{Done: true}
			}
			r := newRig(t, rigOpts{cfg: Config{MaxReceiveCount: 5, HeartbeatInterval: 10 * time.Second, CompleteBackoff: time.Millisecond}, drainer: d,
				timeouts: tt.timeouts, hooks: &fakeHooks{completeErr: tt.complete}})

			got := r.actor.Act(context.Background(), task(policy.ActionCordonAndDrain, 1, tt.ins...))

			if got.Status != handler.StatusRetry {
				t.Fatalf("Act = {%s %q}, want retry", statusName(got.Status), got.Reason)
			}
			if got.RetryWithin != tt.want {
				t.Errorf("RetryWithin = %s, want %s (reason %q)", got.RetryWithin, tt.want, got.Reason)
			}
		})
	}
}

// A batch with no time to act leaves the hooks not on their last delivery
// pending: their retry is capped as well.
func TestCompleteLastDeliveryRetryWithin(t *testing.T) {
	r := newRig(t, rigOpts{cfg: Config{MaxReceiveCount: 5}, timeouts: map[string]time.Duration{"drain": time.Minute}})
	got := r.actor.CompleteLastDelivery(context.Background(), task(policy.ActionCordonAndDrain, 1, lifecycleEvent(t0)))
	if got.Status != handler.StatusRetry || got.RetryWithin != 30*time.Second {
		t.Errorf("CompleteLastDelivery = {%s %q within %s}, want retry within 30s", statusName(got.Status), got.Reason, got.RetryWithin)
	}
}

// The reason of a last-delivery completion counts the hooks completed and
// names each failure, and nothing more.
func TestCompleteLastDeliveryReason(t *testing.T) {
	r := newRig(t, rigOpts{cfg: Config{MaxReceiveCount: 5}})
	got := r.actor.CompleteLastDelivery(context.Background(), task(policy.ActionCordonAndDrain, 5, lifecycleEvent(t0)))
	if want := "1 lifecycle hook(s) on their last delivery completed without draining"; got.Status != handler.StatusRetry || got.Reason != want {
		t.Errorf("CompleteLastDelivery = {%s %q}, want retry %q", statusName(got.Status), got.Reason, want)
	}
	failing := newRig(t, rigOpts{cfg: Config{MaxReceiveCount: 5, CompleteBackoff: time.Millisecond},
		hooks: &fakeHooks{completeErr: errors.New("autoscaling is on fire")}})
	got = failing.actor.CompleteLastDelivery(context.Background(), task(policy.ActionCordonAndDrain, 5, lifecycleEvent(t0)))
	if !strings.HasPrefix(got.Reason, "0 lifecycle hook(s) on their last delivery completed without draining; ") ||
		!strings.Contains(got.Reason, "autoscaling is on fire") {
		t.Errorf("CompleteLastDelivery with a failing completion: %q, want the failure named", got.Reason)
	}
}
