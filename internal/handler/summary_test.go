package handler

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/drainpipe/drainpipe/internal/event"
)

func TestOnRecordSummaries(t *testing.T) {
	actor := &recordingActor{answers: map[string]Result{
		"i-1234567890abcdef0": {Status: StatusRetry, Reason: "budget ran out"},
	}}
	var (
		mu  sync.Mutex
		got = map[string]RecordSummary{}
	)
	h := New(Options{Actor: actor, OnRecord: func(_ context.Context, s RecordSummary) {
		mu.Lock()
		defer mu.Unlock()
		got[s.MessageID] = s
	}})
	spot := msg("spot", body(t, "eventbridge-spot-interruption.json"), "2")
	spot.Attributes["SentTimestamp"] = "1700000000123"
	before := time.Now()
	if _, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		spot, msg("malformed", body(t, "bad-malformed-json.json"), ""),
	}}); err != nil {
		t.Fatal(err)
	}
	parsed, err := event.Parse([]byte(spot.Body))
	if err != nil {
		t.Fatal(err)
	}
	ev := parsed.Interruptions[0]
	want := map[string]RecordSummary{
		"spot": {MessageID: "spot", Kinds: []event.Kind{event.KindSpotInterruption}, Instances: []string{"i-1234567890abcdef0"},
			EventIDs: []string{ev.EventID}, ReceiveCount: 2, Outcome: OutcomeRetry, Reason: "budget ran out",
			EventTime: ev.Time, SentTime: time.UnixMilli(1700000000123)},
		"malformed": {MessageID: "malformed", ReceiveCount: 1, Outcome: OutcomeRejected},
	}
	ignore := cmpopts.IgnoreFields(RecordSummary{}, "Reason", "Duration", "Received")
	if diff := cmp.Diff(want, got, ignore); diff != "" {
		t.Errorf("summaries (-want +got):\n%s", diff)
	}
	if s := got["spot"]; s.Reason != "budget ran out" || s.Received.Before(before) {
		t.Errorf("spot summary reason %q received %v; want the actor's reason, received after %v", s.Reason, s.Received, before)
	}
	if got["malformed"].Reason == "" {
		t.Error("rejected record has no reason")
	}
}

func TestQueueLatency(t *testing.T) {
	at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		s    RecordSummary
		want time.Duration
	}{
		{"event time", RecordSummary{EventTime: at, SentTime: at.Add(time.Second), Received: at.Add(3 * time.Second)}, 3 * time.Second},
		{"sent time when no event time", RecordSummary{SentTime: at, Received: at.Add(2 * time.Second)}, 2 * time.Second},
		{"unknown", RecordSummary{Received: at}, 0},
		{"clock skew", RecordSummary{EventTime: at.Add(time.Second), Received: at}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.s.QueueLatency(); got != tt.want {
				t.Errorf("QueueLatency() = %v, want %v", got, tt.want)
			}
		})
	}
}
