package redeliver

import (
	"testing"
	"time"
)

// A hold sets the message's visibility to the hold (rounded up to seconds,
// capped at SQS's 12 hours), even with the retry backoff turned off.
func TestHold(t *testing.T) {
	sc := newScene(t, 0)
	sc.s.Hold(sc.ctx, msg("m1", arnA, 1), 29*time.Minute+500*time.Millisecond)
	sc.s.Hold(sc.ctx, msg("m2", arnA, 2), 20*time.Hour)
	calls := sc.fake.CallsTo("ChangeMessageVisibilityBatch")
	if len(calls) != 2 {
		t.Fatalf("%d ChangeMessageVisibilityBatch calls, want 2", len(calls))
	}
	for i, want := range []string{"1741", "43200"} {
		if got := calls[i].Params.Get("Entries.1.VisibilityTimeout"); got != want {
			t.Errorf("hold %d: visibility %s, want %s", i, got, want)
		}
	}
	sc.s.Hold(sc.ctx, msg("m3", "not-an-arn", 1), time.Minute)
	if got := len(sc.lines(t, "not holding message")); got != 1 {
		t.Errorf("%d warnings for a message without a queue ARN, want 1", got)
	}
}
