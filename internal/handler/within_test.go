package handler

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"
)

// A retried record whose tasks left lifecycle hooks pending is handed to
// OnRetry with the smallest of their caps (Result.RetryWithin); a record
// without one is handed over uncapped.
func TestOnRetryCarriesSmallestCap(t *testing.T) {
	actor := &recordingActor{answers: map[string]Result{
		// The health notice names two instances: one record, two tasks.
		"i-0aaaa1111bbbb2222": {Status: StatusRetry, Reason: "blocked", RetryWithin: 40 * time.Second},
		"i-0cccc3333dddd4444": {Status: StatusRetry, Reason: "blocked", RetryWithin: 20 * time.Second},
		"i-1234567890abcdef0": {Status: StatusRetry, Reason: "API server unreachable"},
	}}
	var got []Retried
	h := New(Options{Actor: actor, OnRetry: func(_ context.Context, rs []Retried) { got = append(got, rs...) }})
	health := msg("health", body(t, "eventbridge-health-scheduled-change.json"), "1")
	spot := msg("spot", body(t, "eventbridge-spot-interruption.json"), "3")
	resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{health, spot}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"health", "spot"}, failures(resp)); diff != "" {
		t.Errorf("batch item failures (-want +got):\n%s", diff)
	}
	want := []Retried{{Message: health, Within: 20 * time.Second}, {Message: spot}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("OnRetry got (-want +got):\n%s", diff)
	}
}

// A hold on a record with a pending lifecycle hook is cut to the hook's
// cap: a longer hold would let the hook expire.
func TestHoldCappedByPendingHook(t *testing.T) {
	actor := &recordingActor{answers: map[string]Result{
		"i-1234567890abcdef0": {Status: StatusRetry, Reason: "holding", HoldFor: 30 * time.Minute, RetryWithin: 45 * time.Second},
	}}
	var after time.Duration
	h := New(Options{Actor: actor, OnHold: func(_ context.Context, _ events.SQSMessage, d time.Duration) { after = d }})
	if _, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		msg("rebalance", body(t, "eventbridge-rebalance-recommendation.json"), "1"),
	}}); err != nil {
		t.Fatal(err)
	}
	if after != 45*time.Second {
		t.Errorf("held for %s, want 45s (the pending hook's cap)", after)
	}
}
