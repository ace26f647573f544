package pipeline

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/policy"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// An instance scaled in to a warm pool and later launched out of it: the
// terminate action (Destination WarmPool) drains and holds the node; the
// launch (Origin WarmPool) gives the hold back before it waits for Ready,
// so Auto Scaling is not told of capacity that takes no pods. With the
// pool Running no state change ever comes; with it Stopped the stop holds
// the node again and its running notice may come late, or not at all.
func TestWarmPoolScaleInThenLaunchGivesNodeBack(t *testing.T) {
	for _, pool := range []string{"Running", "Stopped"} {
		t.Run(pool, func(t *testing.T) {
			s := newLiveScene(t, Config{OutOfService: true, StoppedWait: time.Second})
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			n, id := s.node(ctx, fixture.NodeOptions{})
			setState := func(state string) {
				s.ec2.mu.Lock()
				defer s.ec2.mu.Unlock()
				inst := s.ec2.known[id]
				inst.State = state
				s.ec2.known[id] = inst
			}
			scaleIn := event.Interruption{Kind: event.KindASGLifecycle, EventID: "scale-in", Time: s.clock.Now(),
				Lifecycle: &event.Lifecycle{ASG: "prod-workers", Hook: "drainpipe", Token: "tok-term",
					Transition: event.TransitionTerminating, InstanceID: id, Origin: "AutoScalingGroup", Destination: "WarmPool"}}
			if r := act(t, ctx, s, id, policy.ActionCordonAndDrain, 1, scaleIn); r.Status != handler.StatusDone {
				t.Fatalf("scale-in to the warm pool: {%s %q}, want drained", statusName(r.Status), r.Reason)
			}
			if m := s.get(ctx, t, n.Name); !m.Cordoned || m.Kind != string(event.KindASGLifecycle) {
				t.Fatalf("after the scale-in: %+v, want held for the lifecycle action", m)
			}
			if pool == "Stopped" {
				s.clock.advance(time.Minute)
				setState("stopped")
				stop := event.Interruption{Kind: event.KindStateChange, EventID: "sc-stopped", Time: s.clock.Now(), State: "stopped"}
				if r := act(t, ctx, s, id, policy.ActionCordonAndDrain, 1, stop); r.Status != handler.StatusDone {
					t.Fatalf("stopped in the pool: {%s %q}", statusName(r.Status), r.Reason)
				}
				if m := s.get(ctx, t, n.Name); !m.OutOfSvc {
					t.Fatalf("after the stop: %+v, want out of service", m)
				}
				setState("running") // its running notice is late: the launch comes first
			}
			s.clock.advance(time.Hour)
			launch := event.Interruption{Kind: event.KindASGLaunchLifecycle, EventID: "leave-pool", Time: s.clock.Now(),
				Lifecycle: &event.Lifecycle{ASG: "prod-workers", Hook: "drainpipe-launch", Token: "tok-launch",
					Transition: event.TransitionLaunching, InstanceID: id, Origin: "WarmPool", Destination: "AutoScalingGroup"}}
			r := act(t, ctx, s, id, policy.ActionNone, 1, launch)
			if r.Status != handler.StatusDone || !strings.Contains(r.Reason, "gave node") || !strings.Contains(r.Reason, "is Ready") {
				t.Errorf("launch out of the pool: {%s %q}, want the node given back, then the hook completed once Ready",
					statusName(r.Status), r.Reason)
			}
			if m := s.get(ctx, t, n.Name); m.Cordoned || m.Held() || m.OutOfSvc {
				t.Errorf("node after the launch out of the pool: %+v, want given back", m)
			}
		})
	}
}
