package redeliver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/google/go-cmp/cmp"

	"github.com/drainpipe/drainpipe/internal/config"
	"github.com/drainpipe/drainpipe/test/awsfake"
)

func TestDelay(t *testing.T) {
	tests := []struct {
		base  time.Duration
		count int
		want  time.Duration
	}{
		{15 * time.Second, 1, 15 * time.Second},
		{15 * time.Second, 0, 15 * time.Second}, // absent count reads as 1
		{15 * time.Second, 2, 30 * time.Second},
		{15 * time.Second, 3, time.Minute},
		{15 * time.Second, 5, 4 * time.Minute},
		{15 * time.Second, 6, MaxDelay},
		{15 * time.Second, 1 << 30, MaxDelay},
		{500 * time.Millisecond, 1, time.Second}, // SQS counts whole seconds
		{1500 * time.Millisecond, 2, 3 * time.Second},
		{1500 * time.Millisecond, 1, 2 * time.Second},
		{10 * time.Minute, 1, MaxDelay},
		{0, 3, 0},
		{-time.Second, 1, 0},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s×%d", tt.base, tt.count), func(t *testing.T) {
			if got := Delay(tt.base, tt.count); got != tt.want {
				t.Errorf("Delay(%s, %d) = %s, want %s", tt.base, tt.count, got, tt.want)
			}
		})
	}
}

const account = "123456789012"

// msg is a record of the queue at url as Lambda hands it over on its
// receiveCount-th delivery, with the receipt handle the queue issued.
func (sc *scene) msg(t *testing.T, url string, receiveCount int) events.SQSMessage {
	t.Helper()
	recs, err := sc.fake.Deliver(url, "{}")
	if err != nil {
		t.Fatal(err)
	}
	rec := recs[0]
	for range receiveCount - 1 {
		if rec, err = sc.fake.Redeliver(url, rec); err != nil {
			t.Fatal(err)
		}
	}
	return rec
}

type scene struct {
	fake   *awsfake.Server
	s      *Scheduler
	logs   *bytes.Buffer
	urlA   string
	urlB   string
	ctx    context.Context
	cancel context.CancelFunc
}

// newScene is a Scheduler with the real SQS client on the fake, queues A
// and B known, logging JSON into a buffer.
func newScene(t *testing.T, delay time.Duration) *scene {
	fake := awsfake.New()
	t.Cleanup(fake.Close)
	logs := &bytes.Buffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return &scene{
		fake: fake, s: New(sqs.NewFromConfig(fake.Config()), delay, log), logs: logs,
		urlA: fake.AddQueue(account, "queue-a"), urlB: fake.AddQueue(account, "queue-b"),
		ctx: ctx, cancel: cancel,
	}
}

// lines returns the logged lines with message msg, as JSON objects.
func (sc *scene) lines(t *testing.T, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(sc.logs.String()), "\n") {
		if line == "" {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec["msg"] == msg {
			out = append(out, rec)
		}
	}
	return out
}

// entriesPerCall lists, per ChangeMessageVisibilityBatch call, the queue
// and the receipt handles it carried.
func entriesPerCall(fake *awsfake.Server) []string {
	var out []string
	for _, c := range fake.CallsTo("ChangeMessageVisibilityBatch") {
		var handles []string
		for i := 1; c.Params.Has(fmt.Sprintf("Entries.%d.ReceiptHandle", i)); i++ {
			handles = append(handles, c.Params.Get(fmt.Sprintf("Entries.%d.ReceiptHandle", i)))
		}
		q := c.Params.Get("QueueUrl")
		out = append(out, q[strings.LastIndex(q, "/")+1:]+" "+strings.Join(handles, ","))
	}
	return out
}

// Exactly ten messages of a queue go in one call, and no empty call (which
// SQS refuses) follows.
func TestScheduleTenInOneCall(t *testing.T) {
	sc := newScene(t, 15*time.Second)
	var msgs []events.SQSMessage
	for range maxEntries {
		msgs = append(msgs, sc.msg(t, sc.urlA, 1))
	}
	sc.s.Schedule(sc.ctx, uncapped(msgs...))
	if n := len(sc.fake.CallsTo("ChangeMessageVisibilityBatch")); n != 1 {
		t.Errorf("%d ChangeMessageVisibilityBatch calls for %d messages, want 1", n, maxEntries)
	}
	if w := sc.lines(t, "scheduling redelivery"); len(w) != 0 {
		t.Errorf("warned %v", w)
	}
}

// Messages are grouped by queue and sent ten at a time, each with the delay
// its receive count earns; queue URLs are looked up once per queue.
func TestScheduleGroupsAndChunks(t *testing.T) {
	sc := newScene(t, 15*time.Second)
	var msgs []events.SQSMessage
	var wantA []string
	wantTimeouts := map[string]int{}
	var b00 events.SQSMessage
	for i := range 12 {
		m := sc.msg(t, sc.urlA, 1+i%3)
		msgs = append(msgs, m)
		wantA = append(wantA, m.ReceiptHandle)
		wantTimeouts[m.ReceiptHandle] = []int{15, 30, 60}[i%3]
		if i == 4 {
			b00 = sc.msg(t, sc.urlB, 7)
			msgs = append(msgs, b00)
			wantTimeouts[b00.ReceiptHandle] = 300
		}
	}
	sc.s.Schedule(sc.ctx, uncapped(msgs...))

	want := []string{
		"queue-a " + strings.Join(wantA[:10], ","),
		"queue-a " + strings.Join(wantA[10:], ","),
		"queue-b " + b00.ReceiptHandle,
	}
	if diff := cmp.Diff(want, entriesPerCall(sc.fake)); diff != "" {
		t.Errorf("ChangeMessageVisibilityBatch calls as queue and receipts (-want +got):\n%s", diff)
	}
	timeouts := map[string]int{}
	for _, c := range sc.fake.VisibilityChanges() {
		timeouts[c.ReceiptHandle] = c.Timeout
	}
	if diff := cmp.Diff(wantTimeouts, timeouts); diff != "" {
		t.Errorf("visibility timeouts by receipt (-want +got):\n%s", diff)
	}
	if n := len(sc.lines(t, "redelivery scheduled")); n != 13 {
		t.Errorf("%d 'redelivery scheduled' lines, want 13", n)
	}

	// The URLs are cached: a second batch asks SQS for none.
	sc.s.Schedule(sc.ctx, uncapped(sc.msg(t, sc.urlA, 1), sc.msg(t, sc.urlB, 1)))
	var asked []string
	for _, c := range sc.fake.CallsTo("GetQueueUrl") {
		asked = append(asked, c.Params.Get("QueueOwnerAWSAccountId")+"/"+c.Params.Get("QueueName"))
	}
	if diff := cmp.Diff([]string{account + "/queue-a", account + "/queue-b"}, asked); diff != "" {
		t.Errorf("GetQueueUrl calls (-want +got):\n%s", diff)
	}
	if n := len(sc.fake.VisibilityChanges()); n != 15 {
		t.Errorf("%d visibility changes after the second batch, want 15", n)
	}
}

// A message twice in one batch is delayed once, through its last receipt;
// messages that cannot be delayed are skipped with a warning.
func TestScheduleSkipsAndDeduplicates(t *testing.T) {
	sc := newScene(t, 15*time.Second)
	first := sc.msg(t, sc.urlA, 1)
	again, err := sc.fake.Redeliver(sc.urlA, first)
	if err != nil {
		t.Fatal(err)
	}
	badARN := sc.msg(t, sc.urlA, 1)
	badARN.EventSourceARN = "arn:aws:sns:us-west-2:123456789012:topic"
	noReceipt := sc.msg(t, sc.urlA, 1)
	noReceipt.ReceiptHandle = ""
	sc.s.Schedule(sc.ctx, uncapped(first, badARN, noReceipt, again))

	want := []awsfake.VisibilityChange{{QueueURL: sc.urlA, ReceiptHandle: again.ReceiptHandle, Timeout: 30}}
	if diff := cmp.Diff(want, sc.fake.VisibilityChanges()); diff != "" {
		t.Errorf("visibility changes (-want +got):\n%s", diff)
	}
	var skipped []string
	for _, l := range sc.lines(t, "not scheduling redelivery") {
		skipped = append(skipped, fmt.Sprint(l["message_id"]))
		if l["level"] != "WARN" || l["error"] == "" {
			t.Errorf("skip logged as %v", l)
		}
	}
	if diff := cmp.Diff([]string{badARN.MessageId, noReceipt.MessageId}, skipped); diff != "" {
		t.Errorf("skipped messages (-want +got):\n%s", diff)
	}
}

// Failures are logged at warn level with the messages they concern and
// never stop the other queues or entries.
func TestScheduleFailures(t *testing.T) {
	t.Run("entry refused", func(t *testing.T) {
		sc := newScene(t, 15*time.Second)
		// stale's handle was superseded by a later receive: SQS refuses it.
		stale := sc.msg(t, sc.urlA, 1)
		if _, err := sc.fake.Redeliver(sc.urlA, stale); err != nil {
			t.Fatal(err)
		}
		fresh := sc.msg(t, sc.urlA, 1)
		sc.s.Schedule(sc.ctx, uncapped(stale, fresh))
		if diff := cmp.Diff([]awsfake.VisibilityChange{{QueueURL: sc.urlA, ReceiptHandle: fresh.ReceiptHandle, Timeout: 15}}, sc.fake.VisibilityChanges()); diff != "" {
			t.Errorf("visibility changes (-want +got):\n%s", diff)
		}
		warns := sc.lines(t, "scheduling redelivery")
		if len(warns) != 1 || warns[0]["level"] != "WARN" || warns[0]["message_id"] != stale.MessageId || warns[0]["code"] != "ReceiptHandleIsInvalid" {
			t.Errorf("warnings = %v, want one for message %s with code ReceiptHandleIsInvalid", warns, stale.MessageId)
		}
	})
	t.Run("unknown queue", func(t *testing.T) {
		sc := newScene(t, 15*time.Second)
		// x and y name a queue that no longer exists.
		x, y, b := sc.msg(t, sc.urlA, 1), sc.msg(t, sc.urlA, 1), sc.msg(t, sc.urlB, 1)
		x.EventSourceARN = "arn:aws:sqs:" + awsfake.Region + ":" + account + ":gone"
		y.EventSourceARN = x.EventSourceARN
		sc.s.Schedule(sc.ctx, uncapped(x, y, b))
		if diff := cmp.Diff([]string{"queue-b " + b.ReceiptHandle}, entriesPerCall(sc.fake)); diff != "" {
			t.Errorf("calls (-want +got):\n%s", diff)
		}
		warns := sc.lines(t, "scheduling redelivery")
		if len(warns) != 1 || !cmp.Equal(warns[0]["message_ids"], []any{x.MessageId, y.MessageId}) || !strings.Contains(fmt.Sprint(warns[0]["error"]), "QueueDoesNotExist") {
			t.Errorf("warnings = %v, want one for x and y naming QueueDoesNotExist", warns)
		}
	})
	t.Run("call denied", func(t *testing.T) {
		sc := newScene(t, 15*time.Second)
		sc.fake.Inject("ChangeMessageVisibilityBatch", awsfake.AccessDenied, 1)
		x := sc.msg(t, sc.urlA, 1)
		sc.s.Schedule(sc.ctx, uncapped(x))
		warns := sc.lines(t, "scheduling redelivery")
		if len(warns) != 1 || !cmp.Equal(warns[0]["message_ids"], []any{x.MessageId}) || !strings.Contains(fmt.Sprint(warns[0]["error"]), "AccessDenied") {
			t.Errorf("warnings = %v, want one for x naming AccessDenied", warns)
		}
	})
	t.Run("context over", func(t *testing.T) {
		sc := newScene(t, 15*time.Second)
		sc.cancel()
		sc.s.Schedule(sc.ctx, uncapped(sc.msg(t, sc.urlA, 1)))
		if n := len(sc.fake.Calls()); n != 0 {
			t.Errorf("%d calls after the context ended, want 0", n)
		}
		if warns := sc.lines(t, "scheduling redelivery"); len(warns) != 1 || !strings.Contains(fmt.Sprint(warns[0]["error"]), "context canceled") {
			t.Errorf("warnings = %v, want one naming the cancelled context", warns)
		}
	})
}

func TestScheduleDisabled(t *testing.T) {
	sc := newScene(t, 0)
	sc.s.Schedule(sc.ctx, uncapped(sc.msg(t, sc.urlA, 1)))
	if n := len(sc.fake.Calls()); n != 0 {
		t.Errorf("%d calls with a zero delay, want none", n)
	}
}

// The configuration bounds the delay by the same cap the backoff uses.
func TestMaxDelayMatchesConfig(t *testing.T) {
	if MaxDelay != config.MaxRetryDelay {
		t.Errorf("MaxDelay = %s, config.MaxRetryDelay = %s; want them equal", MaxDelay, config.MaxRetryDelay)
	}
}

// uncapped wraps messages without a hook's cap.
func uncapped(msgs ...events.SQSMessage) []Retry {
	out := make([]Retry, len(msgs))
	for i, m := range msgs {
		out[i] = Retry{Message: m}
	}
	return out
}
