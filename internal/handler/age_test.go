package handler

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/drainpipe/drainpipe/internal/event"
)

// A drain a PDB blocks for longer than the maximum event age comes back
// with a higher receive count: it must resume, not be acknowledged as stale
// (which would leave the node cordoned and skip the dead-letter queue).
func TestStaleOnlyOnFirstDelivery(t *testing.T) {
	now := time.Date(2026, 11, 20, 18, 0, 0, 0, time.UTC) // ~3 h past the Health start time, ~8 h past the state change
	for _, tc := range []struct {
		receiveCount string
		wantActed    bool
	}{
		{"1", false},
		{"3", true},
	} {
		t.Run("receive count "+tc.receiveCount, func(t *testing.T) {
			actor := &recordingActor{}
			var logs bytes.Buffer
			h := New(Options{Actor: actor, MaxEventAge: time.Hour, Now: func() time.Time { return now },
				Log: slog.New(slog.NewJSONHandler(&logs, nil))})
			_, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
				msg("health", body(t, "eventbridge-health-scheduled-change.json"), tc.receiveCount),
				msg("stopping", body(t, "eventbridge-state-change-stopping.json"), tc.receiveCount),
			}})
			if err != nil {
				t.Fatal(err)
			}
			acted := actor.byInstance()
			for _, id := range []string{"i-0aaaa1111bbbb2222", "i-0abcd1111abcd1111"} {
				if _, ok := acted[id]; ok != tc.wantActed {
					t.Errorf("instance %s acted on = %v, want %v", id, ok, tc.wantActed)
				}
			}
			lines := recordLines(t, &logs)
			if tc.wantActed {
				for id, l := range lines {
					if l.Outcome != "done" {
						t.Errorf("record %s: outcome %q reason %q, want done", id, l.Outcome, l.Reason)
					}
				}
				return
			}
			// The reason quotes the field compared: the Health event's start
			// time (its deadline), the stopping instance's shutdown deadline.
			for id, want := range map[string]string{
				"health":   "deadline 2026-11-20T15:10:09Z",
				"stopping": "deadline 2026-11-20T10:07:54Z",
			} {
				l := lines[id]
				if l.Outcome != "ignored" || !strings.Contains(l.Reason, "stale") || !strings.Contains(l.Reason, want) {
					t.Errorf("record %s: outcome %q reason %q, want ignored as stale quoting %q", id, l.Outcome, l.Reason, want)
				}
			}
		})
	}
}

func TestStaleRule(t *testing.T) {
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	old, fresh := now.Add(-2*time.Hour), now.Add(-time.Minute)
	for _, tc := range []struct {
		name          string
		time, dl      time.Time
		receiveCount  int
		maxAge        time.Duration
		want          bool
		wantInMessage string
		restore       bool
	}{
		{name: "old time, first delivery", time: old, receiveCount: 1, maxAge: time.Hour, want: true, wantInMessage: "time 2026-11-20T10:00:00Z"},
		{name: "old time, redelivery", time: old, receiveCount: 3, maxAge: time.Hour},
		{name: "old time, fresh deadline", time: old, dl: fresh, receiveCount: 1, maxAge: time.Hour},
		{name: "fresh time, old deadline", time: fresh, dl: old, receiveCount: 1, maxAge: time.Hour, want: true, wantInMessage: "deadline 2026-11-20T10:00:00Z"},
		{name: "no age limit", time: old, receiveCount: 1},
		{name: "no time at all", receiveCount: 1, maxAge: time.Hour},
		// A restore is checked against EC2's answer, not its age: aging it
		// out would leave the node held for good.
		{name: "old restore, first delivery", time: old, restore: true, receiveCount: 1, maxAge: time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := event.Interruption{Kind: event.KindStateChange, Time: tc.time, Deadline: tc.dl, Restore: tc.restore}
			reason, got := Stale(in, tc.receiveCount, tc.maxAge, now)
			if got != tc.want || !strings.Contains(reason, tc.wantInMessage) {
				t.Errorf("Stale = %q, %v; want %v with %q", reason, got, tc.want, tc.wantInMessage)
			}
		})
	}
}
