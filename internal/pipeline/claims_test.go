package pipeline

import (
	"context"
	"os"
	"path/filepath"
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
	spotStop := payload(t, "eventbridge-spot-interruption.json", "terminate", "stop")
	hibernate := payload(t, "eventbridge-spot-hibernate.json")
	spotTerminate := payload(t, "eventbridge-spot-interruption.json")
	rebalance := payload(t, "eventbridge-rebalance-recommendation.json")
	stopping := payload(t, "eventbridge-state-change-stopping.json")
	stopped := payload(t, "eventbridge-state-change-stopping.json", `"stopping"`, `"stopped"`)
	// The instance has run since a day before the notices unless a case
	// says otherwise.
	with := func(f func(*instance.Instance)) map[string]instance.Instance {
		i := ourInstance()
		i.LaunchTime = spotStop.Time.Add(-24 * time.Hour)
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
		{"stopped claim, instance running again", with(func(i *instance.Instance) {}), stopped,
			handler.StatusIgnored, "state stopped claim is out of date: EC2 reports the instance running"},
		{"stopping claim, instance pending", with(func(i *instance.Instance) { i.State = "pending" }), stopping,
			handler.StatusIgnored, "reports the instance pending"},
		{"stopped claim, instance stopped", with(func(i *instance.Instance) { i.State = "stopped" }), stopped,
			handler.StatusDone, "drained node"},
		{"spot stop, instance restarted after it", with(func(i *instance.Instance) { i.LaunchTime = spotStop.Time.Add(time.Minute) }), spotStop,
			handler.StatusIgnored, "spot stop claim is out of date"},
		{"spot hibernate, instance pending", with(func(i *instance.Instance) { i.State = "pending" }), hibernate,
			handler.StatusIgnored, "spot hibernate claim is out of date"},
		{"spot stop, two minutes' notice, still running", with(func(i *instance.Instance) {}), spotStop,
			handler.StatusDone, "drained node"},
		{"spot warning for an on-demand instance", with(func(i *instance.Instance) { i.Lifecycle = "" }), spotTerminate,
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
	if logs := r.logs.String(); !strings.Contains(logs, "claims contradicted by EC2 dropped") || !strings.Contains(logs, "out of date") {
		t.Errorf("the dropped claim is not logged with its reason: %s", logs)
	}
}

// A task whose claims EC2 bears out logs no dropped claim.
func TestCredibleClaimsLogNothingDropped(t *testing.T) {
	r := newRig(t, rigOpts{})
	r.actor.Act(context.Background(), task(policy.ActionCordonAndDrain, 1, lifecycleEvent(t0)))
	if strings.Contains(r.logs.String(), "claims contradicted") {
		t.Errorf("a dropped claim logged for a task without one: %s", r.logs.String())
	}
}

// payload parses a real notice from the event package's testdata (after
// replacing old with new, in pairs), aimed at the rig's instance.
func payload(t *testing.T, name string, replace ...string) event.Interruption {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "event", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	body := string(b)
	for i := 0; i+1 < len(replace); i += 2 {
		body = strings.Replace(body, replace[i], replace[i+1], 1)
	}
	p, err := event.Parse([]byte(body))
	if err != nil || len(p.Interruptions) != 1 {
		t.Fatalf("parsing %s: %+v, %v", name, p, err)
	}
	in := p.Interruptions[0]
	in.Instances = []string{instID}
	return in
}

// A restore overtaken by a later threat, or beside a lifecycle hook, does
// not take the task: the threat is acted on.
func TestRestoreOf(t *testing.T) {
	running := event.Interruption{Kind: event.KindStateChange, Time: t0.Add(time.Minute), State: "running", Restore: true}
	tests := []struct {
		name string
		ins  []event.Interruption
		want bool
	}{
		{"restore alone", []event.Interruption{running}, true},
		{"restore after the stop", []event.Interruption{stateChange(t0, "stopped"), running}, true},
		{"stop after the restore", []event.Interruption{running, stateChange(t0.Add(2*time.Minute), "stopped")}, false},
		{"restore beside a hook", []event.Interruption{lifecycleEvent(t0), running}, false},
	}
	for _, tt := range tests {
		if _, got := restoreOf(handler.Task{Interruptions: tt.ins}); got != tt.want {
			t.Errorf("%s: restoreOf = %v, want %v", tt.name, got, tt.want)
		}
	}
}
