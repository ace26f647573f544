package pipeline

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/hold"
	"github.com/drainpipe/drainpipe/internal/policy"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// A first delivery of a terminate action already over ends only the hold
// it took itself: the holds that stand — a cordon-only delivery of the
// same action (its instance terminating), a rebalance hold, a
// retirement's — keep the node; a retirement that ends afterwards gives
// the node back whole, as nothing of the over action's is left.
func TestOverActionEndsOnlyItsOwnHold(t *testing.T) {
	retirement := func(s *liveScene) event.Interruption {
		return event.Interruption{Kind: event.KindScheduledChange, EventID: "arn:aws:health:eu-west-1::event/EC2/R/1",
			Time: s.clock.Now(), Deadline: s.clock.Now().Add(24 * time.Hour)}
	}
	for _, tc := range []struct {
		name   string
		before func(ctx context.Context, t *testing.T, s *liveScene, node, id string)
	}{
		{"cordon-only delivery of the same action", func(ctx context.Context, t *testing.T, s *liveScene, node, id string) {
			in := hookOn(id, "prod-workers", "tok-gone", s.clock.Now())
			earlier := drain.New(s.env.Client, drain.DefaultConfig(), nil)
			if _, err := earlier.Run(ctx, drain.Request{Node: node, Kind: string(in.Kind), Holds: []hold.Hold{hold.Of(in, "earlier", s.clock.Now())}}); err != nil {
				t.Fatal(err)
			}
		}},
		{"rebalance hold", func(ctx context.Context, t *testing.T, s *liveScene, node, id string) {
			rb := event.Interruption{Kind: event.KindRebalanceRecommendation, EventID: "rb-1", Time: s.clock.Now()}
			earlier := drain.New(s.env.Client, drain.DefaultConfig(), nil)
			if _, err := earlier.Run(ctx, drain.Request{Node: node, Kind: string(rb.Kind), EventID: rb.EventID, EventTime: rb.Time}); err != nil {
				t.Fatal(err)
			}
		}},
		{"retirement", func(ctx context.Context, t *testing.T, s *liveScene, node, id string) {
			if r := act(t, ctx, s, id, policy.ActionCordon, 1, retirement(s)); r.Status != handler.StatusDone {
				t.Fatalf("retirement: %+v", r)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			s, _, n, id := goneActionScene(ctx, t)
			tc.before(ctx, t, s, n.Name, id)
			held := s.get(ctx, t, n.Name).Holds

			s.clock.advance(time.Minute)
			tk := handler.Task{InstanceID: id, Action: policy.ActionCordonAndDrain, ReceiveCount: 1,
				Interruptions: []event.Interruption{hookOn(id, "prod-workers", "tok-gone", s.clock.Now())}}
			s.actor.Prepare(ctx, []handler.Task{tk})
			r := s.actor.Act(ctx, tk)

			m := s.get(ctx, t, n.Name)
			if !strings.Contains(r.Reason, "no longer active") || !m.Cordoned || m.Holds.String() != held.String() {
				t.Fatalf("over action: {%s %q}, node %+v; want the node held as before (%s)", statusName(r.Status), r.Reason, m, held)
			}
			if tc.name != "retirement" {
				return
			}
			closed := retirement(s)
			closed.Restore, closed.Deadline, closed.Time = true, time.Time{}, s.clock.Now().Add(time.Hour)
			if r := act(t, ctx, s, id, policy.ActionNone, 1, closed); r.Status != handler.StatusDone || !strings.Contains(r.Reason, "gave node") {
				t.Errorf("retirement closed: {%s %q}, want the node given back", statusName(r.Status), r.Reason)
			}
			if m := s.get(ctx, t, n.Name); m.Cordoned || m.Held() {
				t.Errorf("node after every threat ended: %+v, want given back whole", m)
			}
		})
	}
}

// A warm-pool round trip keeps a retirement that stands: the launch out
// of the pool ends the terminate action's hold, and the node stays held
// until the retirement ends. With DRAINPIPE_LAUNCH_WAIT_READY=false the
// launch ends the pool's hold too, rather than leave the node cordoned in
// service until the sweep.
func TestWarmPoolRoundTripKeepsOtherHolds(t *testing.T) {
	for _, noWait := range []bool{false, true} {
		t.Run(map[bool]string{false: "wait ready", true: "no wait"}[noWait], func(t *testing.T) {
			s := newLiveScene(t, Config{LaunchNoWait: noWait})
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			n, id := s.node(ctx, fixture.NodeOptions{})
			retire := event.Interruption{Kind: event.KindScheduledChange, EventID: "arn:aws:health:eu-west-1::event/EC2/R/2",
				Time: s.clock.Now(), Deadline: s.clock.Now().Add(24 * time.Hour)}
			if !noWait {
				if r := act(t, ctx, s, id, policy.ActionCordonAndDrain, 1, retire); r.Status != handler.StatusDone {
					t.Fatalf("retirement: %+v", r)
				}
			}
			s.clock.advance(time.Minute)
			scaleIn := event.Interruption{Kind: event.KindASGLifecycle, EventID: "scale-in", Time: s.clock.Now(),
				Lifecycle: &event.Lifecycle{ASG: "prod-workers", Hook: "drainpipe", Token: "tok-term",
					Transition: event.TransitionTerminating, InstanceID: id, Origin: "AutoScalingGroup", Destination: "WarmPool"}}
			if r := act(t, ctx, s, id, policy.ActionCordonAndDrain, 1, scaleIn); r.Status != handler.StatusDone {
				t.Fatalf("scale-in to the warm pool: {%s %q}", statusName(r.Status), r.Reason)
			}
			s.clock.advance(time.Hour)
			launch := event.Interruption{Kind: event.KindASGLaunchLifecycle, EventID: "leave-pool", Time: s.clock.Now(),
				Lifecycle: &event.Lifecycle{ASG: "prod-workers", Hook: "drainpipe-launch", Token: "tok-launch",
					Transition: event.TransitionLaunching, InstanceID: id, Origin: "WarmPool", Destination: "AutoScalingGroup"}}
			r := act(t, ctx, s, id, policy.ActionNone, 1, launch)
			m := s.get(ctx, t, n.Name)
			switch {
			case r.Status != handler.StatusDone:
				t.Errorf("launch: {%s %q}, want done", statusName(r.Status), r.Reason)
			case noWait && (m.Cordoned || m.Held()):
				t.Errorf("after a launch without waiting: %+v (%q), want the node given back", m, r.Reason)
			case !noWait && (!m.Cordoned || len(m.Holds) != 1 || m.Holds[0].Kind != string(event.KindScheduledChange)):
				t.Errorf("after the launch: %+v (%q), want held for the retirement alone", m, r.Reason)
			}
		})
	}
}

// A node tainted out of service with no hold (its stopped notice late,
// the sweep found the instance stopped) is given back whole when the
// instance runs: taint, mark and held label gone.
func TestOutOfServiceWithoutHoldGivenBackWhole(t *testing.T) {
	s := newLiveScene(t, Config{OutOfService: true})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n, id := s.node(ctx, fixture.NodeOptions{})
	if _, err := drain.MarkOutOfService(ctx, s.env.Client, n.Name, s.clock.Now()); err != nil {
		t.Fatal(err)
	}
	s.clock.advance(time.Minute)
	running := event.Interruption{Kind: event.KindStateChange, EventID: "sc-running", Time: s.clock.Now(), State: "running", Restore: true}
	if r := act(t, ctx, s, id, policy.ActionNone, 1, running); r.Status != handler.StatusDone {
		t.Errorf("running: {%s %q}, want done", statusName(r.Status), r.Reason)
	}
	got, err := s.env.Client.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m := drain.ReadMarks(got); m.Held() || got.Labels[drain.LabelHeld] != "" {
		t.Errorf("node after running: %+v, labels %v; want no Drainpipe mark left", m, got.Labels)
	}
}

// lifeHooks are fakeHooks that also say how long a group's terminate
// action can last.
type lifeHooks struct {
	*fakeHooks
	life time.Duration
}

func (h lifeHooks) ActionLife(context.Context, string, []string) (time.Duration, error) {
	return h.life, nil
}

// A redelivered terminate action records on its hold when the action ends
// at the latest (its start plus the life read then), for the sweep.
func TestRedeliveredActionRecordsItsLife(t *testing.T) {
	hooks := lifeHooks{fakeHooks: &fakeHooks{}, life: 3 * time.Hour}
	s := newLiveSceneWith(t, Config{}, func(d *Deps) { d.Hooks = hooks })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n, id := s.node(ctx, fixture.NodeOptions{})
	in := hookOn(id, "prod-workers", "tok-life", s.clock.Now().Truncate(time.Second))
	for rc := 1; rc <= 2; rc++ {
		act(t, ctx, s, id, policy.ActionCordon, rc, in)
		m := s.get(ctx, t, n.Name)
		want := ""
		if rc == 2 {
			want = hold.Stamp(in.Time.Add(3 * time.Hour))
		}
		if len(m.Holds) != 1 || m.Holds[0].End != want {
			t.Errorf("delivery %d: holds %+v, want one ending %q", rc, m.Holds, want)
		}
	}
}
