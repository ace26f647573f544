package redeliver

import (
	"testing"
	"time"
)

// A hold sets the message's visibility to the hold (rounded up to seconds,
// capped at SQS's 12 hours), even with the retry backoff turned off.
func TestHold(t *testing.T) {
	sc := newScene(t, 0)
	sc.s.Hold(sc.ctx, sc.msg(t, sc.urlA, 1), 29*time.Minute+500*time.Millisecond)
	sc.s.Hold(sc.ctx, sc.msg(t, sc.urlA, 2), 20*time.Hour)
	calls := sc.fake.CallsTo("ChangeMessageVisibilityBatch")
	if len(calls) != 2 {
		t.Fatalf("%d ChangeMessageVisibilityBatch calls, want 2", len(calls))
	}
	for i, want := range []string{"1741", "43200"} {
		if got := calls[i].Params.Get("Entries.1.VisibilityTimeout"); got != want {
			t.Errorf("hold %d: visibility %s, want %s", i, got, want)
		}
	}
	if n := len(sc.fake.VisibilityChanges()); n != 2 {
		t.Errorf("%d visibility changes served, want 2", n)
	}
	m3 := sc.msg(t, sc.urlA, 1)
	m3.EventSourceARN = "not-an-arn"
	sc.s.Hold(sc.ctx, m3, time.Minute)
	if got := len(sc.lines(t, "not holding message")); got != 1 {
		t.Errorf("%d warnings for a message without a queue ARN, want 1", got)
	}
}
