package pipeline

import (
	"context"
	"strings"
	"testing"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/policy"
)

// A drain whose batch gives way stops at once with a retry that says so;
// its lifecycle hook is left pending for the redelivery (not completed,
// the node not being empty), and the hook's heartbeats go on meanwhile.
func TestDrainStopsWhenItsBatchGivesWay(t *testing.T) {
	yield, give := context.WithCancelCause(context.Background())
	defer give(nil)
	drainer := &fakeDrainer{report: drain.Report{BlockedByPDB: []string{"shop/db-0"}},
		run: func(ctx context.Context, req drain.Request) {
			give(handler.ErrGaveWay) // the batch gives way while this drain waits on a budget
			if req.Yield == nil {
				t.Error("the drain request carries no Yield: a give-way cannot stop it")
				return
			}
			<-req.Yield.Done() // the Run stops retrying; its requests' context lives on
		}}
	r := newRig(t, rigOpts{drainer: drainer})
	ctx := handler.WithYield(context.Background(), yield)

	res := r.actor.Act(ctx, task(policy.ActionCordonAndDrain, 1, spot(t0), lifecycleEvent(t0)))
	if res.Status != handler.StatusRetry || !strings.Contains(res.Reason, "gave way") {
		t.Errorf("Act = %+v, want a retry saying the batch gave way", res)
	}
	if res.Node != nodeName {
		t.Errorf("node %q, want %q", res.Node, nodeName)
	}
	if _, completes := r.hooks.counts(); completes != 0 {
		t.Errorf("%d hook completions, want none: the node is not empty", completes)
	}
	if res.RetryWithin <= 0 {
		t.Errorf("RetryWithin %s: the pending hook must bound how long the record stays away", res.RetryWithin)
	}
}
