package handler

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"

	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/policy"
)

// recordingActor records every task and answers from a script by instance
// (done when unscripted).
type recordingActor struct {
	mu      sync.Mutex
	tasks   []Task
	answers map[string]Result
}

func (a *recordingActor) Act(_ context.Context, t Task) Result {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.tasks = append(a.tasks, t)
	if r, ok := a.answers[t.InstanceID]; ok {
		return r
	}
	return Result{Status: StatusDone, Reason: "handled"}
}

func (a *recordingActor) byInstance() map[string]Task {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := map[string]Task{}
	for _, t := range a.tasks {
		out[t.InstanceID] = t
	}
	return out
}

func body(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "event", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func msg(id, body string, receiveCount string) events.SQSMessage {
	m := events.SQSMessage{MessageId: id, Body: body}
	if receiveCount != "" {
		m.Attributes = map[string]string{"ApproximateReceiveCount": receiveCount}
	}
	return m
}

// logLine is the part of a record's log line the tests read.
type logLine struct {
	Msg        string   `json:"msg"`
	MessageID  string   `json:"message_id"`
	Kind       string   `json:"kind"`
	Instances  []string `json:"instances"`
	Outcome    string   `json:"outcome"`
	Reason     string   `json:"reason"`
	DurationMS *float64 `json:"duration_ms"`
}

func recordLines(t *testing.T, buf *bytes.Buffer) map[string]logLine {
	t.Helper()
	out := map[string]logLine{}
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var l logLine
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("log line %q is not JSON: %v", line, err)
		}
		if l.Msg == "record handled" {
			if l.DurationMS == nil {
				t.Errorf("log line %q has no duration_ms", line)
			}
			out[l.MessageID] = l
		}
	}
	return out
}

func failures(resp events.SQSEventResponse) []string {
	var ids []string
	for _, f := range resp.BatchItemFailures {
		ids = append(ids, f.ItemIdentifier)
	}
	slices.Sort(ids)
	return ids
}

func TestHandleMixedBatch(t *testing.T) {
	actor := &recordingActor{answers: map[string]Result{
		"i-0cccc3333dddd4444": {Status: StatusRetry, Reason: "API server unreachable"},
	}}
	var logs bytes.Buffer
	p := policy.Default()
	p[event.KindASGLifecycle] = policy.ActionNone
	p[event.KindStateChange] = policy.ActionNone
	h := New(Options{Policy: p, Actor: actor, Log: slog.New(slog.NewJSONHandler(&logs, nil))})

	lifecycle := body(t, "eventbridge-asg-terminate-lifecycle.json")
	resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		msg("spot", body(t, "eventbridge-spot-interruption.json"), "1"),
		msg("rebalance", body(t, "eventbridge-rebalance-recommendation.json"), "3"),
		msg("hook", lifecycle, ""),
		msg("malformed", body(t, "bad-malformed-json.json"), "1"),
		msg("test-notification", body(t, "asg-test-notification.json"), "1"),
		msg("health", body(t, "eventbridge-health-scheduled-change.json"), "2"),
		msg("stopping", body(t, "eventbridge-state-change-stopping.json"), "1"),
		msg("hook-again", lifecycle, "2"),
	}})
	if err != nil {
		t.Fatalf("Handle error: %v", err)
	}
	if diff := cmp.Diff([]string{"health"}, failures(resp)); diff != "" {
		t.Errorf("batch item failures (-want +got):\n%s", diff)
	}

	spot, _ := event.Parse([]byte(body(t, "eventbridge-spot-interruption.json")))
	rebalance, _ := event.Parse([]byte(body(t, "eventbridge-rebalance-recommendation.json")))
	hook, _ := event.Parse([]byte(lifecycle))
	health, _ := event.Parse([]byte(body(t, "eventbridge-health-scheduled-change.json")))
	healthFor := func(id string) event.Interruption {
		in := health.Interruptions[0]
		in.Instances = []string{id}
		return in
	}
	want := map[string]Task{
		"i-1234567890abcdef0": {InstanceID: "i-1234567890abcdef0", Action: policy.ActionCordonAndDrain,
			Interruptions: []event.Interruption{spot.Interruptions[0], rebalance.Interruptions[0]}, ReceiveCount: 3},
		"i-0fedcba9876543210": {InstanceID: "i-0fedcba9876543210", Action: policy.ActionNone,
			Interruptions: hook.Interruptions, ReceiveCount: 2,
			HookReceiveCounts: map[event.Lifecycle]int{*hook.Interruptions[0].Lifecycle: 2}},
		"i-0aaaa1111bbbb2222": {InstanceID: "i-0aaaa1111bbbb2222", Action: policy.ActionCordonAndDrain,
			Interruptions: []event.Interruption{healthFor("i-0aaaa1111bbbb2222")}, ReceiveCount: 2},
		"i-0cccc3333dddd4444": {InstanceID: "i-0cccc3333dddd4444", Action: policy.ActionCordonAndDrain,
			Interruptions: []event.Interruption{healthFor("i-0cccc3333dddd4444")}, ReceiveCount: 2},
		"i-12345678": {InstanceID: "i-12345678", Action: policy.ActionCordonAndDrain,
			Interruptions: []event.Interruption{healthFor("i-12345678")}, ReceiveCount: 2},
	}
	if diff := cmp.Diff(want, actor.byInstance()); diff != "" {
		t.Errorf("tasks (-want +got):\n%s", diff)
	}
	if n := len(actor.tasks); n != len(want) {
		t.Errorf("actor called %d times, want once per instance (%d)", n, len(want))
	}

	lines := recordLines(t, &logs)
	wantOutcomes := map[string]struct{ outcome, reason string }{
		"spot":              {"done", "handled"},
		"rebalance":         {"done", "handled"},
		"hook":              {"done", "handled"},
		"hook-again":        {"done", "handled"},
		"malformed":         {"rejected", "message rejected"},
		"test-notification": {"ignored", "TEST_NOTIFICATION"},
		"health":            {"retry", "i-0cccc3333dddd4444: API server unreachable"},
		"stopping":          {"ignored", "DRAINPIPE_ACTION_STATE_CHANGE"},
	}
	for id, w := range wantOutcomes {
		l, ok := lines[id]
		if !ok {
			t.Errorf("no log line for record %s", id)
			continue
		}
		if l.Outcome != w.outcome || !strings.Contains(l.Reason, w.reason) {
			t.Errorf("record %s: outcome %q reason %q; want %q with a reason mentioning %q", id, l.Outcome, l.Reason, w.outcome, w.reason)
		}
	}
	if l := lines["health"]; l.Kind != "scheduled-change" || len(l.Instances) != 3 {
		t.Errorf("health log line kind %q instances %q, want scheduled-change and 3 instances", l.Kind, l.Instances)
	}
}

func TestHandleIgnoredTaskStatus(t *testing.T) {
	actor := &recordingActor{answers: map[string]Result{
		"i-1234567890abcdef0": {Status: StatusIgnored, Reason: "no node on this instance"},
	}}
	h := New(Options{Actor: actor})
	resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		msg("spot", body(t, "eventbridge-spot-interruption.json"), "1"),
	}})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Errorf("Handle = %+v, %v; want no failures", resp, err)
	}
}

func TestHandleStaleEvents(t *testing.T) {
	actor := &recordingActor{}
	var logs bytes.Buffer
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC) // two hours after the spot warning
	h := New(Options{Actor: actor, MaxEventAge: time.Hour, Now: func() time.Time { return now },
		Log: slog.New(slog.NewJSONHandler(&logs, nil))})
	_, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		msg("spot", body(t, "eventbridge-spot-interruption.json"), "1"),
		msg("hook", body(t, "eventbridge-asg-terminate-lifecycle.json"), "1"),
		msg("health", body(t, "eventbridge-health-scheduled-change.json"), "1"), // starts at 15:10, not stale
	}})
	if err != nil {
		t.Fatal(err)
	}
	got := slices.Sorted(maps.Keys(actor.byInstance()))
	want := []string{"i-0aaaa1111bbbb2222", "i-0cccc3333dddd4444", "i-0fedcba9876543210", "i-12345678"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("instances acted on (-want +got):\n%s", diff)
	}
	if l := recordLines(t, &logs)["spot"]; l.Outcome != "ignored" || !strings.Contains(l.Reason, "stale") {
		t.Errorf("stale spot record: outcome %q reason %q, want ignored as stale", l.Outcome, l.Reason)
	}
}

// An empty SQS body is a message like any other: it ends rejected with
// its reason, and is not retried.
func TestHandleEmptyBody(t *testing.T) {
	actor := &recordingActor{}
	var logs bytes.Buffer
	h := New(Options{Actor: actor, Log: slog.New(slog.NewJSONHandler(&logs, nil))})
	resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		msg("empty", "", "1"), msg("blank", " \n", "1"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got := failures(resp); len(got) != 0 {
		t.Errorf("retried %v, want none", got)
	}
	if len(actor.tasks) != 0 {
		t.Errorf("actor called with %+v", actor.tasks)
	}
	lines := recordLines(t, &logs)
	for _, id := range []string{"empty", "blank"} {
		if l := lines[id]; l.Outcome != "rejected" || !strings.Contains(l.Reason, "empty body") {
			t.Errorf("record %s: outcome %q reason %q, want rejected for its empty body", id, l.Outcome, l.Reason)
		}
	}
}
