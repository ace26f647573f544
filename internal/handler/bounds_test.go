package handler

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/drainpipe/drainpipe/internal/event"
)

// Boundaries of the handler's rules: exactly at a limit, just below, just
// above.

func TestStaleAtExactlyMaxAge(t *testing.T) {
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	first := Delivery{ReceiveCount: 1}
	for _, tc := range []struct {
		name string
		in   event.Interruption
		d    Delivery
		want bool
	}{
		{"time exactly max age ago", event.Interruption{Time: now.Add(-time.Hour)}, first, false},
		{"time a second past max age", event.Interruption{Time: now.Add(-time.Hour - time.Second)}, first, true},
		{"deadline exactly max age ago", event.Interruption{Time: now.Add(-3 * time.Hour), Deadline: now.Add(-time.Hour)}, first, false},
		{"deadline a second past", event.Interruption{Time: now, Deadline: now.Add(-time.Hour - time.Second)}, first, true},
		// Sent exactly max age after its event: judged by its event time.
		{"sent exactly max age after the event", event.Interruption{Time: now.Add(-2 * time.Hour)},
			Delivery{ReceiveCount: 1, Sent: now.Add(-time.Hour)}, true},
		// A second later: a redrive, judged by its sent time (exactly max age ago).
		{"sent a second more after the event", event.Interruption{Time: now.Add(-2 * time.Hour)},
			Delivery{ReceiveCount: 1, Sent: now.Add(-time.Hour + time.Second)}, false},
		{"second delivery", event.Interruption{Time: now.Add(-5 * time.Hour)}, Delivery{ReceiveCount: 2}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reason, got := Stale(tc.in, tc.d, time.Hour, now)
			if got != tc.want {
				t.Errorf("Stale = %q, %v; want %v", reason, got, tc.want)
			}
		})
	}
	if _, got := Stale(event.Interruption{Time: now.Add(-time.Hour - time.Second)}, first, time.Nanosecond-1, now); got {
		t.Error("a max age of 0 aged an event out")
	}
	if _, got := Stale(event.Interruption{Time: now.Add(-time.Second)}, first, time.Nanosecond, now); !got {
		t.Error("a max age of 1ns kept a second-old event")
	}
}

func TestGiveWayOnNeedsEveryPart(t *testing.T) {
	waiting := func(context.Context, string) (int, error) { return 1, nil }
	for _, tc := range []struct {
		name string
		g    GiveWay
		want bool
	}{
		{"all set", GiveWay{After: time.Nanosecond, Waiting: waiting}, true},
		{"after 0", GiveWay{After: 0, Waiting: waiting}, false},
		{"no queue to ask", GiveWay{After: time.Second}, false},
	} {
		if got := tc.g.on(); got != tc.want {
			t.Errorf("%s: on = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// panickingFlusher panics in Flush.
type panickingFlusher struct{ recordingActor }

func (*panickingFlusher) Flush(context.Context) { panic("webhook exploded") }

// A flush that panics costs the batch nothing but a log line; one that
// does not logs nothing of the kind.
func TestFlushPanicKeepsTheAnswer(t *testing.T) {
	for _, tc := range []struct {
		name  string
		actor Actor
		want  bool
	}{
		{"panics", &panickingFlusher{}, true},
		{"flushes", &flushingActor{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			h := New(Options{Actor: tc.actor, Log: slog.New(slog.NewJSONHandler(&logs, nil))})
			resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
				msg("spot", body(t, "eventbridge-spot-interruption.json"), "1")}})
			if err != nil || len(failures(resp)) != 0 {
				t.Fatalf("Handle = %v, %v; want the batch done", failures(resp), err)
			}
			if got := strings.Contains(logs.String(), "flushing the actor panicked"); got != tc.want {
				t.Errorf("panic logged = %v, want %v:\n%s", got, tc.want, logs.String())
			}
		})
	}
}

// deadlineCompleter records the deadline CompleteLastDelivery was given.
type deadlineCompleter struct {
	recordingActor
	deadline time.Time
	ok       bool
}

func (a *deadlineCompleter) CompleteLastDelivery(ctx context.Context, _ Task) Result {
	a.deadline, a.ok = ctx.Deadline()
	return Result{Status: StatusRetry, Reason: "completed"}
}

// Without time to act, the hooks on their last delivery are completed
// with three quarters of what is left: a quarter is kept to answer.
func TestCannotActKeepsAQuarterToAnswer(t *testing.T) {
	actor := &deadlineCompleter{}
	h := New(Options{Actor: actor, DeadlineReserve: 2 * time.Hour})
	deadline := time.Now().Add(time.Hour)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	if _, err := h.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{
		msg("hook", body(t, "eventbridge-asg-terminate-lifecycle.json"), "5")}}); err != nil {
		t.Fatal(err)
	}
	// What is left is at most the hour: the quarter kept is at most 15 minutes.
	if !actor.ok || !actor.deadline.Before(deadline) || actor.deadline.Before(deadline.Add(-15*time.Minute)) {
		t.Errorf("completion deadline %v (%v), want within the quarter hour before %v", actor.deadline, actor.ok, deadline)
	}
}

// The batch's log line counts each outcome once per record.
func TestBatchLineCountsOutcomes(t *testing.T) {
	actor := &recordingActor{answers: map[string]Result{
		"i-0cccc3333dddd4444": {Status: StatusRetry, Reason: "API server unreachable"},
	}}
	var logs bytes.Buffer
	h := New(Options{Actor: actor, Log: slog.New(slog.NewJSONHandler(&logs, nil))})
	if _, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		msg("spot", body(t, "eventbridge-spot-interruption.json"), "1"),
		msg("rebalance", body(t, "eventbridge-rebalance-recommendation.json"), "1"),
		msg("malformed", body(t, "bad-malformed-json.json"), "1"),
		msg("test-notification", body(t, "asg-test-notification.json"), "1"),
		msg("health", body(t, "eventbridge-health-scheduled-change.json"), "1"),
	}}); err != nil {
		t.Fatal(err)
	}
	var line struct {
		Msg                                            string
		Records, Tasks, Done, Ignored, Rejected, Retry int
	}
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if strings.Contains(l, `"msg":"batch handled"`) {
			if err := json.Unmarshal([]byte(l), &line); err != nil {
				t.Fatal(err)
			}
		}
	}
	if line.Records != 5 || line.Tasks != 4 || line.Done != 2 || line.Ignored != 1 || line.Rejected != 1 || line.Retry != 1 {
		t.Errorf("batch line = %+v, want 5 records, 4 tasks: 2 done, 1 ignored, 1 rejected, 1 retry", line)
	}
}

// A batch whose only retry is held hands nothing to OnRetry, not even an
// empty list.
func TestHeldOnlyBatchCallsNoOnRetry(t *testing.T) {
	actor := &recordingActor{answers: map[string]Result{
		"i-1234567890abcdef0": {Status: StatusRetry, Reason: "holding", HoldFor: time.Minute},
	}}
	var held, onRetry int
	h := New(Options{Actor: actor,
		OnHold:  func(context.Context, events.SQSMessage, time.Duration) { held++ },
		OnRetry: func(context.Context, []Retried) { onRetry++ }})
	if _, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		msg("rebalance", body(t, "eventbridge-rebalance-recommendation.json"), "1")}}); err != nil {
		t.Fatal(err)
	}
	if held != 1 || onRetry != 0 {
		t.Errorf("OnHold called %d times, OnRetry %d; want 1 and 0", held, onRetry)
	}
}

func TestMilliseconds(t *testing.T) {
	if got := ms(1500 * time.Microsecond); got != 1.5 {
		t.Errorf("ms(1.5ms) = %v, want 1.5", got)
	}
}

// A hook whose record names no instance is noted under the task's.
func TestNoteHookFillsTheInstance(t *testing.T) {
	task := Task{InstanceID: "i-1", ReceiveCount: 1}
	l := event.Lifecycle{ASG: "g", Hook: "h", Token: "tok"}
	task.noteHook(&l, "i-1", 3)
	task.noteHook(&l, "i-1", 2) // the highest count is kept
	task.noteHook(nil, "i-1", 9)
	l.InstanceID = "i-1"
	if got := task.HookReceiveCount(l); got != 3 {
		t.Errorf("HookReceiveCount = %d, want 3 (the hook's records')", got)
	}
	if len(task.HookReceiveCounts) != 1 {
		t.Errorf("hooks noted: %v, want one", task.HookReceiveCounts)
	}
}

// A record whose tasks want an ordinary retry and a hold comes back as
// an ordinary retry: the ordinary one must not wait.
func TestOrdinaryRetryBeatsAHold(t *testing.T) {
	actor := &recordingActor{answers: map[string]Result{
		"i-0aaaa1111bbbb2222": {Status: StatusRetry, Reason: "holding", HoldFor: time.Hour},
		"i-0cccc3333dddd4444": {Status: StatusRetry, Reason: "API down"},
	}}
	var held int
	var retried []Retried
	h := New(Options{Actor: actor,
		OnHold:  func(context.Context, events.SQSMessage, time.Duration) { held++ },
		OnRetry: func(_ context.Context, r []Retried) { retried = append(retried, r...) }})
	if _, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		msg("health", body(t, "eventbridge-health-scheduled-change.json"), "1")}}); err != nil {
		t.Fatal(err)
	}
	if held != 0 || len(retried) != 1 || retried[0].Message.MessageId != "health" {
		t.Errorf("held %d, retried %+v; want the record retried, not held", held, retried)
	}
}

// A record of one task gives that task's reason as it is; a record of
// several names each task's instance.
func TestRecordReasonExactly(t *testing.T) {
	actor := &recordingActor{answers: map[string]Result{
		"i-1234567890abcdef0": {Status: StatusDone, Reason: "drained"},
		"i-0aaaa1111bbbb2222": {Status: StatusDone, Reason: "drained"},
		"i-0cccc3333dddd4444": {Status: StatusIgnored, Reason: "not ours"},
		"i-12345678":          {Status: StatusDone},
		"i-0abcd1111abcd1111": {Status: StatusIgnored, Reason: "not mine"},
	}}
	var logs bytes.Buffer
	h := New(Options{Actor: actor, Log: slog.New(slog.NewJSONHandler(&logs, nil))})
	if _, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		msg("spot", body(t, "eventbridge-spot-interruption.json"), "1"),
		msg("health", body(t, "eventbridge-health-scheduled-change.json"), "1"),
		msg("stopping", body(t, "eventbridge-state-change-stopping.json"), "1"),
	}}); err != nil {
		t.Fatal(err)
	}
	lines := recordLines(t, &logs)
	if l := lines["stopping"]; l.Outcome != "ignored" || l.Reason != "not mine" {
		t.Errorf("ignored task's record: %q, %q; want ignored, %q", l.Outcome, l.Reason, "not mine")
	}
	if got := lines["spot"].Reason; got != "drained" {
		t.Errorf("one task's record: reason %q, want %q", got, "drained")
	}
	// Done beats ignored; a done task without a reason says done.
	if got, want := lines["health"].Reason, "i-0aaaa1111bbbb2222: drained; i-12345678: done"; got != want {
		t.Errorf("several tasks' record: reason %q, want %q", got, want)
	}
}

func TestSentTime(t *testing.T) {
	for raw, want := range map[string]time.Time{
		"":              {},
		"0":             {},
		"-5":            {},
		"x":             {},
		"1":             time.UnixMilli(1),
		"1764000000000": time.UnixMilli(1764000000000),
	} {
		if got := sentTime(events.SQSMessage{Attributes: map[string]string{"SentTimestamp": raw}}); !got.Equal(want) {
			t.Errorf("sentTime(%q) = %v, want %v", raw, got, want)
		}
	}
}

// The batch waits for its tasks until half the reserve before the
// invocation's deadline (the tasks themselves end at the whole reserve):
// the give-way watch asks, once, within that wait. An unreadable queue, or
// one with nothing waiting, does not make the batch give way.
func TestBatchWaitEndsAtHalfTheReserve(t *testing.T) {
	for _, tc := range []struct {
		name  string
		n     int
		err   error
		gives bool
		warns int
	}{
		{"unreadable", 0, errors.New("queue unreadable"), false, 1},
		{"empty", 0, nil, false, 0},
		{"waiting", 1, nil, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			deadline := time.Now().Add(time.Hour)
			ctx, cancel := context.WithDeadline(context.Background(), deadline)
			defer cancel()
			actor := &yieldingActor{release: make(chan struct{}), arrived: make(chan struct{}, 1)}
			var (
				asks  int
				asked time.Time
			)
			waiting := func(ctx context.Context, _ string) (int, error) {
				<-actor.arrived // the drain is under way before the batch asks
				asks++
				asked, _ = ctx.Deadline()
				if !tc.gives {
					close(actor.release)
				}
				return tc.n, tc.err
			}
			var logs bytes.Buffer
			h := New(Options{Actor: actor, DeadlineReserve: 20 * time.Minute, Log: slog.New(slog.NewJSONHandler(&logs, nil)),
				GiveWay: GiveWay{After: time.Nanosecond, Waiting: waiting}})
			resp, err := h.Handle(ctx, firstDelivery(1, "1"))
			want := 0
			if tc.gives {
				want = 1
			}
			if err != nil || len(resp.BatchItemFailures) != want || actor.yielded != want {
				t.Fatalf("Handle = %v, %v with %d yielded; want %d given back", resp, err, actor.yielded, want)
			}
			if asks != 1 {
				t.Errorf("asked %d times, want once", asks)
			}
			if want := deadline.Add(-10 * time.Minute); !asked.Equal(want) {
				t.Errorf("watch deadline %v, want half the reserve before the invocation's: %v", asked, want)
			}
			if n := strings.Count(logs.String(), "cannot tell whether messages wait"); n != tc.warns {
				t.Errorf("%d warnings of an unreadable queue, want %d", n, tc.warns)
			}
		})
	}
}
