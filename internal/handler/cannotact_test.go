package handler

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"
)

// lastDeliveryActor records which tasks it was asked to settle without
// acting; Act must not be called.
type lastDeliveryActor struct {
	recordingActor
	settled []string
}

func (a *lastDeliveryActor) CompleteLastDelivery(_ context.Context, t Task) Result {
	a.settled = append(a.settled, t.InstanceID)
	return Result{Status: StatusRetry, Reason: "1 lifecycle hook(s) on their last delivery completed without draining"}
}

// An invocation whose time is within the deadline reserve acts on
// nothing, yet still lets the actor complete last-delivery hooks, retries
// every record and logs an error saying why.
func TestHandleWithoutTimeToAct(t *testing.T) {
	actor := &lastDeliveryActor{}
	var logs bytes.Buffer
	h := New(Options{Actor: actor, DeadlineReserve: 10 * time.Second, Log: slog.New(slog.NewJSONHandler(&logs, nil))})
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	resp, err := h.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{
		msg("hook", body(t, "eventbridge-asg-terminate-lifecycle.json"), "5"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"hook"}, failures(resp)); diff != "" {
		t.Errorf("batch item failures (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"i-0fedcba9876543210"}, actor.settled); diff != "" {
		t.Errorf("tasks settled without acting (-want +got):\n%s", diff)
	}
	if len(actor.tasks) != 0 {
		t.Errorf("Act called for %d tasks, want none", len(actor.tasks))
	}
	if !strings.Contains(logs.String(), `"level":"ERROR","msg":"invocation cannot act`) {
		t.Errorf("no error log saying why nothing was done:\n%s", logs.String())
	}
}
