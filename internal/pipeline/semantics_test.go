package pipeline

import (
	"strings"
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/policy"
)

// Another tool's hook of a served group (DRAINPIPE_LIFECYCLE_HOOK_NAMES
// names Drainpipe's own) is left alone: no heartbeat, no completion, no
// lookup, with the reason.
func TestOtherToolsHookLeftAlone(t *testing.T) {
	r := newRig(t, rigOpts{cfg: Config{HookNames: []string{"drainpipe", "drainpipe-launch"}}})
	got := r.actor.Act(t.Context(), task(policy.ActionCordonAndDrain, 1, lifecycleEvent(t0))) // hook "drain"
	if got.Status != handler.StatusIgnored || !strings.Contains(got.Reason, "DRAINPIPE_LIFECYCLE_HOOK_NAMES") {
		t.Errorf("result {%s %q}, want ignored: another tool's hook", statusName(got.Status), got.Reason)
	}
	if hb, c := r.hooks.counts(); hb != 0 || c != 0 {
		t.Errorf("heartbeats, completions = %d, %d; want none", hb, c)
	}
}

// A launch into the warm pool is completed at once: no node will be Ready.
func TestLaunchIntoWarmPoolCompletesAtOnce(t *testing.T) {
	r := newRig(t, rigOpts{})
	in := event.Interruption{Kind: event.KindASGLaunchLifecycle, Instances: []string{instID}, EventID: "l-1", Time: t0,
		Lifecycle: &event.Lifecycle{ASG: "prod-workers", Hook: "drainpipe-launch", Token: "tok-l",
			Transition: event.TransitionLaunching, InstanceID: instID, Origin: "EC2", Destination: event.WarmPool}}
	got := r.actor.Act(t.Context(), task(policy.ActionNone, 1, in))
	if got.Status != handler.StatusDone || !strings.Contains(got.Reason, "warm pool") {
		t.Errorf("result {%s %q}, want done: into the warm pool", statusName(got.Status), got.Reason)
	}
	if _, c := r.hooks.counts(); c != 1 {
		t.Errorf("completions = %d, want 1", c)
	}
}

// Only a terminate hook suppresses a restore; a launch hook rides along.
func TestRestoreOfWithHooks(t *testing.T) {
	running := event.Interruption{Kind: event.KindStateChange, Instances: []string{instID}, Time: t0, State: "running", Restore: true}
	launch := event.Interruption{Kind: event.KindASGLaunchLifecycle, Instances: []string{instID}, Time: t0.Add(time.Second),
		Lifecycle: &event.Lifecycle{ASG: "g", Hook: "drainpipe-launch", Token: "t", Transition: event.TransitionLaunching}}
	if _, ok := restoreOf(task(policy.ActionNone, 1, launch, running)); !ok {
		t.Error("launch + running: restore dropped, want it applied")
	}
	if _, ok := restoreOf(task(policy.ActionNone, 1, lifecycleEvent(t0), running)); ok {
		t.Error("terminate hook + running: restore kept, want it suppressed")
	}
}
