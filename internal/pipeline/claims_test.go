package pipeline

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/instance"
	"github.com/drainpipe/drainpipe/internal/policy"
)

// Claims EC2's already-fetched answer contradicts are not acted on, with
// the reason; claims it bears out are. Parsed from the real payloads.
func TestClaimsCheckedAgainstEC2(t *testing.T) {
	spotStop := spot(t0)
	spotStop.InstanceAction = "stop"
	hibernate := spot(t0)
	hibernate.InstanceAction, hibernate.Deadline = "hibernate", t0.Add(time.Second)
	rebalance := event.Interruption{Kind: event.KindRebalanceRecommendation, Instances: []string{instID}, EventID: "rb-1", Time: t0}
	with := func(f func(*instance.Instance)) map[string]instance.Instance {
		i := ourInstance()
		i.LaunchTime = t0.Add(-24 * time.Hour)
		f(&i)
		return map[string]instance.Instance{instID: i}
	}
	tests := []struct {
		name       string
		instances  map[string]instance.Instance
		in         event.Interruption
		wantStatus handler.Status
		wantReason string
	}{
		{"stopped claim, instance running again", with(func(i *instance.Instance) {}), stateChange(t0, "stopped"),
			handler.StatusIgnored, "state stopped claim is out of date: EC2 reports the instance running"},
		{"stopping claim, instance pending", with(func(i *instance.Instance) { i.State = "pending" }), stateChange(t0, "stopping"),
			handler.StatusIgnored, "reports the instance pending"},
		{"stopped claim, instance stopped", with(func(i *instance.Instance) { i.State = "stopped" }), stateChange(t0, "stopped"),
			handler.StatusDone, "drained node"},
		{"spot stop, instance restarted after it", with(func(i *instance.Instance) { i.LaunchTime = t0.Add(time.Minute) }), spotStop,
			handler.StatusIgnored, "spot stop claim is out of date"},
		{"spot hibernate, instance pending", with(func(i *instance.Instance) { i.State = "pending" }), hibernate,
			handler.StatusIgnored, "spot hibernate claim is out of date"},
		{"spot stop, two minutes' notice, still running", with(func(i *instance.Instance) {}), spotStop,
			handler.StatusDone, "drained node"},
		{"spot warning for an on-demand instance", with(func(i *instance.Instance) { i.Lifecycle = "" }), spot(t0),
			handler.StatusIgnored, `spot-interruption for an instance EC2 does not report as Spot (instance lifecycle "on-demand")`},
		{"rebalance for a capacity-block instance", with(func(i *instance.Instance) { i.Lifecycle = "capacity-block" }), rebalance,
			handler.StatusIgnored, `instance lifecycle "capacity-block"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, rigOpts{instances: tt.instances})
			got := r.actor.Act(context.Background(), task(policy.ActionCordonAndDrain, 1, tt.in))
			if got.Status != tt.wantStatus || !strings.Contains(got.Reason, tt.wantReason) {
				t.Errorf("Act = {%s %q}, want {%s containing %q}", statusName(got.Status), got.Reason,
					statusName(tt.wantStatus), tt.wantReason)
			}
			if drained := len(r.drainer.reqs) > 0; drained != (tt.wantStatus == handler.StatusDone) {
				t.Errorf("drained %v, want %v", drained, tt.wantStatus == handler.StatusDone)
			}
		})
	}
}

// A contradicted claim beside a lifecycle hook drops the claim but keeps
// the hook, which is still completed.
func TestClaimsKeepHooks(t *testing.T) {
	r := newRig(t, rigOpts{})
	got := r.actor.Act(context.Background(), task(policy.ActionCordonAndDrain, 1, stateChange(t0, "stopped"), lifecycleEvent(t0)))
	if got.Status != handler.StatusDone || len(r.drainer.reqs) != 1 || r.drainer.reqs[0].Kind != "asg-lifecycle" {
		t.Errorf("Act = %+v, drains %+v; want the hook's drain only", got, r.drainer.reqs)
	}
}
