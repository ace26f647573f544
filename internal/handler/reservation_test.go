package handler

import (
	"context"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/policy"
)

// A Capacity Block expiry names a reservation, not instances: the plan
// makes one task for it (the actor finds its instances), however many
// records carry it, and every record ends with that task's outcome.
func TestPlanCapacityBlockIsOneReservationTask(t *testing.T) {
	block := body(t, "eventbridge-capacity-block-expiry.json")
	for _, tt := range []struct {
		answer Result
		want   outcome
	}{
		{Result{Status: StatusDone, Reason: "drained"}, outcomeDone},
		{Result{Status: StatusRetry, Reason: "describing instances: throttled"}, outcomeRetry},
	} {
		actor := &recordingActor{answers: map[string]Result{"": tt.answer}}
		h := New(Options{Actor: actor})
		p := h.plan([]events.SQSMessage{msg("a", block, "1"), msg("b", block, "2")}, origin{})
		if len(p.tasks) != 1 {
			t.Fatalf("tasks = %+v, want one", p.tasks)
		}
		task := p.tasks[0]
		if task.Reservation != "cr-0123456789abcdef0" || task.InstanceID != "" || task.Action != policy.ActionCordonAndDrain ||
			task.ReceiveCount != 2 || len(task.Interruptions) != 1 || task.Interruptions[0].Kind != event.KindCapacityBlockExpiry {
			t.Errorf("task = %+v", task)
		}
		if got, want := Describe(task), "cordon and drain the nodes of every instance in capacity reservation cr-0123456789abcdef0"; got != want {
			t.Errorf("Describe = %q, want %q", got, want)
		}
		resp, _ := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{msg("a", block, "1"), msg("b", block, "2")}})
		if got := len(failures(resp)); (tt.want == outcomeRetry) != (got == 2) {
			t.Errorf("answer %v: %d failures", tt.answer, got)
		}
	}
}
