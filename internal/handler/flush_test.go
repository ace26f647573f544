package handler

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// flushingActor notes when Flush is called and with what deadline.
type flushingActor struct {
	recordingActor
	flushed        bool
	tasksAtFlush   int
	flushDeadline  time.Time
	flushHadBudget bool
}

func (a *flushingActor) Flush(ctx context.Context) {
	a.mu.Lock()
	a.flushed, a.tasksAtFlush = true, len(a.tasks)
	a.mu.Unlock()
	a.flushDeadline, a.flushHadBudget = ctx.Deadline()
}

// Work left in flight (webhook messages) may delay the answer within the
// reserve but change no outcome: the actor is flushed once all tasks have
// returned, until a quarter of the reserve before the deadline.
func TestFlushAfterOutcomes(t *testing.T) {
	actor := &flushingActor{recordingActor: recordingActor{answers: map[string]Result{
		"i-0aaaa1111bbbb2222": {Status: StatusRetry, Reason: "budget ran out"},
	}}}
	h := New(Options{Actor: actor, DeadlineReserve: 2 * time.Second})
	deadline := time.Now().Add(time.Minute)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	resp, err := h.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{
		msg("health", body(t, "eventbridge-health-scheduled-change.json"), "1"),
		msg("spot", body(t, "eventbridge-spot-interruption.json"), "1"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !actor.flushed || actor.tasksAtFlush != 4 {
		t.Errorf("flushed %v with %d tasks acted on, want after all 4", actor.flushed, actor.tasksAtFlush)
	}
	if want := deadline.Add(-500 * time.Millisecond); !actor.flushHadBudget || !actor.flushDeadline.Equal(want) {
		t.Errorf("flush deadline %v (%v), want a quarter of the reserve before the invocation's: %v", actor.flushDeadline, actor.flushHadBudget, want)
	}
	if got := failures(resp); len(got) != 1 || got[0] != "health" {
		t.Errorf("batch item failures %v, want [health]", got)
	}
}
