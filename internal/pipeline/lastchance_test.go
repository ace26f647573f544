package pipeline

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/policy"
)

// healthIssue is a Health notice for the instance, with no deadline.
func healthIssue() event.Interruption {
	return event.Interruption{Kind: event.KindScheduledChange, Instances: []string{instID}, EventID: "health-1", Time: t0}
}

// The last chance is decided per hook, from the receive count of the
// record that carried it: a hook on its first delivery is left pending
// while the drain is blocked, although a Health notice for the same
// instance is on its last delivery; a hook on its own last delivery is
// completed.
func TestSettlePerHookLastChance(t *testing.T) {
	first := lifecycleEvent(t0)
	last := lifecycleEvent(t0)
	last.EventID, last.Lifecycle = "asg-2", &event.Lifecycle{ASG: "prod-workers", Hook: "drain", Token: "tok-2",
		Transition: "autoscaling:EC2_INSTANCE_TERMINATING", InstanceID: instID}
	tk := task(policy.ActionCordonAndDrain, 5, healthIssue(), first, last)
	tk.HookReceiveCounts = map[event.Lifecycle]int{*first.Lifecycle: 1, *last.Lifecycle: 5}
	blocked := &fakeDrainer{report: drain.Report{BlockedByPDB: []string{"shop/web-1"}}}
	r := newRig(t, rigOpts{cfg: Config{MaxReceiveCount: 5}, drainer: blocked})

	got := r.actor.Act(context.Background(), tk)

	if got.Status != handler.StatusRetry {
		t.Errorf("Act = {%s %q}, want retry", statusName(got.Status), got.Reason)
	}
	if diff := cmp.Diff([]event.Lifecycle{*last.Lifecycle}, r.hooks.completes); diff != "" {
		t.Errorf("completed hooks (-want +got):\n%s", diff)
	}
}
