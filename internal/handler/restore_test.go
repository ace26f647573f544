package handler

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/policy"
)

// TestPlanRestoreAndCordonOnly: a restore (state running, Health closed)
// reaches the actor whatever the policy; an AWS Health code that does not
// stop the instance is capped at cordon; a held rebalance redelivery does
// not age out.
func TestPlanRestoreAndCordonOnly(t *testing.T) {
	actor := &recordingActor{}
	p := policy.Default()
	p[event.KindStateChange] = policy.ActionNone
	now := time.Date(2026, 11, 20, 11, 0, 0, 0, time.UTC)
	h := New(Options{Actor: actor, Policy: p, MaxEventAge: time.Hour, Now: func() time.Time { return now }})
	_, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		msg("running", body(t, "eventbridge-state-change-running.json"), "1"),
		msg("maintenance", body(t, "eventbridge-health-network-maintenance.json"), "1"),
		msg("rebalance-held", body(t, "eventbridge-rebalance-recommendation.json"), "2"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	got := actor.byInstance()
	run, ok := got["i-0abcd1111abcd1111"]
	if !ok || len(run.Interruptions) != 1 || !run.Interruptions[0].Restore {
		t.Errorf("running state change: task %+v (present %v), want one restore interruption", run, ok)
	}
	if m := got["i-0aaaa1111bbbb2222"]; m.Action != policy.ActionCordon {
		t.Errorf("system maintenance action = %q, want cordon", m.Action)
	}
	if r, ok := got["i-1234567890abcdef0"]; !ok || r.Action != policy.ActionCordon {
		t.Errorf("held rebalance redelivery: task %+v (present %v), want it acted on with cordon", r, ok)
	}
}

// A record whose task asks for a hold is reported as a failure and handed
// to OnHold with its hold, not to OnRetry; an ordinary retry is not held.
func TestHandleHold(t *testing.T) {
	actor := &recordingActor{answers: map[string]Result{
		"i-1234567890abcdef0": {Status: StatusRetry, Reason: "holding", HoldFor: 30 * time.Minute},
		"i-0abcd1111abcd1111": {Status: StatusRetry, Reason: "API down"},
	}}
	var held, retried []string
	var after time.Duration
	h := New(Options{Actor: actor,
		OnHold: func(_ context.Context, m events.SQSMessage, d time.Duration) {
			held, after = append(held, m.MessageId), d
		},
		OnRetry: func(_ context.Context, rs []Retried) {
			for _, r := range rs {
				retried = append(retried, r.Message.MessageId)
			}
		}})
	resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		msg("rebalance", body(t, "eventbridge-rebalance-recommendation.json"), "1"),
		msg("stopping", body(t, "eventbridge-state-change-stopping.json"), "1"),
	}})
	if err != nil || len(resp.BatchItemFailures) != 2 {
		t.Fatalf("Handle = %+v, %v; want both records retried", resp, err)
	}
	if len(held) != 1 || held[0] != "rebalance" || after != 30*time.Minute {
		t.Errorf("held %v for %s, want [rebalance] for 30m", held, after)
	}
	if len(retried) != 1 || retried[0] != "stopping" {
		t.Errorf("retried %v, want [stopping]", retried)
	}
}

func TestDescribeRestore(t *testing.T) {
	got := Describe(Task{InstanceID: "i-12345678", Action: policy.ActionNone,
		Interruptions: []event.Interruption{{Kind: event.KindStateChange, State: "running", Restore: true}}})
	if want := "give back the node of i-12345678 if Drainpipe holds it"; got != want {
		t.Errorf("Describe = %q, want %q", got, want)
	}
}
