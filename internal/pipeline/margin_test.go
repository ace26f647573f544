package pipeline

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/policy"
)

// DRAINPIPE_SAFETY_MARGIN: the drain stops waiting that long before the
// instance goes, and a drain still unfinished then is acknowledged (the
// instance is about to go; a redelivery cannot help).
func TestActStopsSafetyMarginBeforeDeadline(t *testing.T) {
	const margin = 10 * time.Second
	clock := &fakeClock{now: t0}
	drainer := &fakeDrainer{report: drain.Report{BlockedByPDB: []string{"shop/db-0"}},
		during: func(context.Context) { clock.advance(2*time.Minute - margin) }} // waits until its context ends
	r := newRig(t, rigOpts{cfg: Config{SafetyMargin: margin}, clock: clock, drainer: drainer})
	before := time.Now()
	got := r.actor.Act(context.Background(), task(policy.ActionCordonAndDrain, 1, spot(t0))) // goes at t0+2m
	after := time.Now()

	dl := r.drainer.deadlines[0]
	if early, late := before.Add(2*time.Minute-margin), after.Add(2*time.Minute-margin); dl.Before(early) || dl.After(late) {
		t.Errorf("drain context ends at %v, want between %v and %v (the deadline less the margin)", dl, early, late)
	}
	if got.Status != handler.StatusDone || !strings.Contains(got.Reason, "instance deadline passed (less the 10s safety margin) before node") {
		t.Errorf("Act = {%s %q}, want done as the deadline less the margin passed", statusName(got.Status), got.Reason)
	}
}

// With less than the margin left there is no margin to keep: the drain
// cordons and evicts until the deadline itself.
func TestActWithLessThanSafetyMarginLeft(t *testing.T) {
	clock := &fakeClock{now: t0.Add(2*time.Minute - 5*time.Second)}
	r := newRig(t, rigOpts{cfg: Config{SafetyMargin: 10 * time.Second}, clock: clock})
	before := time.Now()
	got := r.actor.Act(context.Background(), task(policy.ActionCordonAndDrain, 1, spot(t0)))
	after := time.Now()
	if got.Status != handler.StatusDone || len(r.drainer.deadlines) != 1 {
		t.Fatalf("Act = {%s %q} after %d drains, want done after one", statusName(got.Status), got.Reason, len(r.drainer.deadlines))
	}
	if dl := r.drainer.deadlines[0]; dl.Before(before.Add(5*time.Second)) || dl.After(after.Add(5*time.Second)) {
		t.Errorf("drain context ends at %v, want at the deadline, 5s after %v", dl, before)
	}
}

func TestNegativeSafetyMarginRejected(t *testing.T) {
	if _, err := New(Config{SafetyMargin: -time.Second}, Deps{}); err == nil || !strings.Contains(err.Error(), "safety margin") {
		t.Errorf("New = %v, want a safety margin error", err)
	}
}
