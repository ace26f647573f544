package pipeline

import (
	"testing"

	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
)

// A task's hooks are its distinct lifecycle actions, each naming the
// task's instance when the notice did not; its holds are its threats,
// restores and launch hooks aside.
func TestHooksAndHoldsOf(t *testing.T) {
	named := lifecycleEvent(t0)
	unnamed := lifecycleEvent(t0)
	l := *unnamed.Lifecycle
	l.InstanceID = ""
	unnamed.Lifecycle = &l
	launch := lifecycleEvent(t0)
	launch.Kind = event.KindASGLaunchLifecycle
	restore := event.Interruption{Kind: event.KindRebalanceRecommendation, Restore: true}
	task := handler.Task{InstanceID: instID, Interruptions: []event.Interruption{named, unnamed, {Kind: event.KindSpotInterruption}, launch, restore}}
	hooks := hooksOf(task)
	if len(hooks) != 1 || hooks[0].InstanceID != instID {
		t.Errorf("hooks %+v, want the one action, naming %s", hooks, instID)
	}
	holds := holdsOf(task, "d1", t0)
	if len(holds) != 3 || holds[2].Kind != string(event.KindSpotInterruption) {
		t.Errorf("holds %+v, want the two notices of the action and the Spot warning", holds)
	}
}
