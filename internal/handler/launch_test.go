package handler

import (
	"context"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/policy"
)

// A launch hook has no policy action of its own, yet reaches the actor
// (only it completes the hook), with its action none: nothing is cordoned.
func TestHandleLaunchHookReachesActor(t *testing.T) {
	actor := &recordingActor{}
	h := New(Options{Actor: actor, Policy: policy.Default()})
	resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		msg("eb", body(t, "eventbridge-asg-launch-lifecycle.json"), "1"),
		msg("direct", body(t, "asg-lifecycle-launching.json"), "2"),
	}})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("Handle = %+v, %v; want no failures", resp, err)
	}
	tasks := actor.byInstance()
	for _, id := range []string{"i-0123456789abcdef1", "i-0598c7d356eba48d8"} {
		tk, ok := tasks[id]
		if !ok || tk.Action != policy.ActionNone || len(tk.Interruptions) != 1 ||
			tk.Interruptions[0].Kind != event.KindASGLaunchLifecycle || tk.Interruptions[0].Lifecycle == nil {
			t.Errorf("task for %s = %+v (found %v); want one launch hook with action none", id, tk, ok)
		}
	}
}
