package handler

import (
	"bytes"
	"context"
	"log/slog"
	"strconv"
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
		sent          time.Time // SentTimestamp; zero when unknown
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
		// Sent long after its event: redriven or resent. The message's
		// own wait counts, not the event's age...
		{name: "old time, sent just now", time: old, sent: fresh, receiveCount: 1, maxAge: time.Hour},
		{name: "old time, sent long ago", time: old, sent: old.Add(time.Second), receiveCount: 1, maxAge: time.Hour, want: true, wantInMessage: "time 2026-11-20T10:00:00Z"},
		{name: "redriven long ago, never read", time: old.Add(-2 * time.Hour), sent: old, receiveCount: 1, maxAge: time.Hour, want: true, wantInMessage: "sent time 2026-11-20T10:00:00Z"},
		// ...but a deadline long passed stays passed, however fresh the message.
		{name: "old deadline, sent just now", time: old, dl: old, sent: fresh, receiveCount: 1, maxAge: time.Hour, want: true, wantInMessage: "deadline 2026-11-20T10:00:00Z"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := event.Interruption{Kind: event.KindStateChange, Time: tc.time, Deadline: tc.dl, Restore: tc.restore}
			reason, got := Stale(in, Delivery{ReceiveCount: tc.receiveCount, Sent: tc.sent}, tc.maxAge, now)
			if got != tc.want || !strings.Contains(reason, tc.wantInMessage) {
				t.Errorf("Stale = %q, %v; want %v with %q", reason, got, tc.want, tc.wantInMessage)
			}
		})
	}
}

// A message redriven from the dead-letter queue comes back as a first
// delivery (SQS's move task gives it a new id and sent time) of an event
// hours old. It must not be aged out for the event's age alone: what the
// threat says decides. A threat whose deadline passed long ago is reported
// and left; one without a deadline (a rebalance recommendation) is acted on;
// a lifecycle action is completed. The same records unread in the queue
// since the event (a backlog) are aged out as before.
func TestRedrivenRecordJudgedByItsThreat(t *testing.T) {
	now := time.Date(2026, 11, 20, 18, 0, 0, 0, time.UTC) // 8 h after the fixtures
	ms := func(at time.Time) string { return strconv.FormatInt(at.UnixMilli(), 10) }
	for _, tc := range []struct {
		name      string
		sent      func(eventTime time.Time) time.Time
		rebalance bool // the rebalance recommendation is acted on
	}{
		{"redriven", func(time.Time) time.Time { return now.Add(-time.Minute) }, true},
		{"backlog", func(e time.Time) time.Time { return e.Add(time.Second) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := func(id, file string, eventTime time.Time) events.SQSMessage {
				m := msg(id, body(t, file), "1")
				m.Attributes["SentTimestamp"] = ms(tc.sent(eventTime))
				return m
			}
			actor := &recordingActor{}
			var logs bytes.Buffer
			h := New(Options{Actor: actor, MaxEventAge: time.Hour, Now: func() time.Time { return now },
				Log: slog.New(slog.NewJSONHandler(&logs, nil))})
			_, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
				rec("rebalance", "eventbridge-rebalance-recommendation.json", time.Date(2026, 11, 20, 9, 58, 0, 0, time.UTC)),
				rec("spot", "eventbridge-spot-interruption.json", time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)),
				rec("hook", "eventbridge-asg-terminate-lifecycle.json", time.Date(2026, 11, 20, 10, 10, 0, 0, time.UTC)),
			}})
			if err != nil {
				t.Fatal(err)
			}
			acted := actor.byInstance()
			if _, ok := acted["i-1234567890abcdef0"]; ok != tc.rebalance {
				t.Errorf("rebalance acted on = %v, want %v", ok, tc.rebalance)
			}
			if _, ok := acted["i-0fedcba9876543210"]; !ok {
				t.Errorf("lifecycle action not handed to the actor: it must be completed")
			}
			lines := recordLines(t, &logs)
			if l := lines["spot"]; l.Outcome != "ignored" || !strings.Contains(l.Reason, "deadline 2026-11-20T10:02:00Z") {
				t.Errorf("spot: outcome %q reason %q; want ignored, naming its passed deadline", l.Outcome, l.Reason)
			}
			if l := lines["rebalance"]; !tc.rebalance && (l.Outcome != "ignored" || !strings.Contains(l.Reason, "stale")) {
				t.Errorf("backlogged rebalance: outcome %q reason %q; want ignored as stale", l.Outcome, l.Reason)
			}
		})
	}
}
