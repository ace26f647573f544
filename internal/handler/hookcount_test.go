package handler

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"

	"github.com/drainpipe/drainpipe/internal/event"
)

// A task keeps the receive count of the records that carried each hook:
// a hook on its first delivery stays at 1 although a spot warning for the
// same instance is on its fifth.
func TestHookReceiveCountIsThatOfItsRecord(t *testing.T) {
	const id = "i-0fedcba9876543210"
	hookBody := body(t, "eventbridge-asg-terminate-lifecycle.json")
	spotBody := strings.ReplaceAll(body(t, "eventbridge-spot-interruption.json"), "i-1234567890abcdef0", id)
	actor := &recordingActor{}
	h := New(Options{Actor: actor})
	if _, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		msg("hook", hookBody, "1"), msg("spot", spotBody, "5"),
	}}); err != nil {
		t.Fatal(err)
	}
	tk, ok := actor.byInstance()[id]
	if !ok {
		t.Fatalf("no task for %s: %+v", id, actor.tasks)
	}
	hook, err := event.Parse([]byte(hookBody))
	if err != nil {
		t.Fatal(err)
	}
	l := *hook.Interruptions[0].Lifecycle
	got := []int{tk.ReceiveCount, tk.HookReceiveCount(l)}
	if diff := cmp.Diff([]int{5, 1}, got); diff != "" {
		t.Errorf("task and hook receive counts (-want +got):\n%s", diff)
	}
}
