package handler

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"
)

// retryHook records what OnRetry was handed.
type retryHook struct {
	calls    [][]events.SQSMessage
	deadline []time.Time // zero when the context had none
}

func (r *retryHook) on(ctx context.Context, retried []Retried) {
	msgs := make([]events.SQSMessage, len(retried))
	for i, rt := range retried {
		msgs[i] = rt.Message
	}
	r.calls = append(r.calls, msgs)
	d, _ := ctx.Deadline()
	r.deadline = append(r.deadline, d)
}

// OnRetry gets the retried records, whole and in batch order, once per
// batch; done, ignored and rejected records never reach it.
func TestOnRetryGetsRetriedRecords(t *testing.T) {
	actor := &recordingActor{answers: map[string]Result{
		"i-1234567890abcdef0": {Status: StatusRetry, Reason: "blocked by a disruption budget"},
		"i-0cccc3333dddd4444": {Status: StatusRetry, Reason: "API server unreachable"},
	}}
	hook := &retryHook{}
	h := New(Options{Actor: actor, OnRetry: hook.on})
	spot := msg("spot", body(t, "eventbridge-spot-interruption.json"), "2")
	spot.ReceiptHandle, spot.EventSourceARN = "AQEBspot", "arn:aws:sqs:us-west-2:123456789012:drainpipe"
	health := msg("health", body(t, "eventbridge-health-scheduled-change.json"), "1")
	health.ReceiptHandle = "AQEBhealth"
	resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		msg("hook", body(t, "eventbridge-asg-terminate-lifecycle.json"), "1"),
		health,
		msg("malformed", body(t, "bad-malformed-json.json"), "1"),
		spot,
	}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"health", "spot"}, failures(resp)); diff != "" {
		t.Errorf("batch item failures (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][]events.SQSMessage{{health, spot}}, hook.calls); diff != "" {
		t.Errorf("OnRetry calls (-want +got):\n%s", diff)
	}
}

func TestOnRetryNotCalledWithoutRetries(t *testing.T) {
	hook := &retryHook{}
	h := New(Options{Actor: &recordingActor{}, OnRetry: hook.on})
	if _, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		msg("spot", body(t, "eventbridge-spot-interruption.json"), "1"),
		msg("malformed", body(t, "bad-malformed-json.json"), "1"),
	}}); err != nil {
		t.Fatal(err)
	}
	if len(hook.calls) != 0 {
		t.Errorf("OnRetry called %d times for a batch with nothing to retry", len(hook.calls))
	}
}

// OnRetry's context ends a quarter of the reserve before the invocation's
// deadline; without a deadline it gets none.
func TestOnRetryContext(t *testing.T) {
	retry := &recordingActor{answers: map[string]Result{"i-1234567890abcdef0": {Status: StatusRetry}}}
	batch := events.SQSEvent{Records: []events.SQSMessage{msg("spot", body(t, "eventbridge-spot-interruption.json"), "1")}}
	deadline := time.Now().Add(time.Hour)
	tests := []struct {
		name    string
		reserve time.Duration
		ctx     func() (context.Context, context.CancelFunc)
		want    time.Time
	}{
		{"deadline and reserve", 20 * time.Second, func() (context.Context, context.CancelFunc) {
			return context.WithDeadline(context.Background(), deadline)
		}, deadline.Add(-5 * time.Second)},
		{"no reserve", 0, func() (context.Context, context.CancelFunc) {
			return context.WithDeadline(context.Background(), deadline)
		}, deadline},
		{"no deadline", 20 * time.Second, func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }, time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hook := &retryHook{}
			ctx, cancel := tt.ctx()
			defer cancel()
			h := New(Options{Actor: retry, DeadlineReserve: tt.reserve, OnRetry: hook.on})
			if _, err := h.Handle(ctx, batch); err != nil {
				t.Fatal(err)
			}
			if len(hook.deadline) != 1 || !hook.deadline[0].Equal(tt.want) {
				t.Errorf("OnRetry deadlines = %v, want [%v]", hook.deadline, tt.want)
			}
		})
	}
}

// A panicking hook is logged; the batch still gets its answer.
func TestOnRetryPanicKeepsResponse(t *testing.T) {
	var logs bytes.Buffer
	h := New(Options{
		Actor:   &recordingActor{answers: map[string]Result{"i-1234567890abcdef0": {Status: StatusRetry}}},
		Log:     slog.New(slog.NewJSONHandler(&logs, nil)),
		OnRetry: func(context.Context, []Retried) { panic("queue on fire") },
	})
	resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		msg("spot", body(t, "eventbridge-spot-interruption.json"), "1"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"spot"}, failures(resp)); diff != "" {
		t.Errorf("batch item failures (-want +got):\n%s", diff)
	}
	if !strings.Contains(logs.String(), `"msg":"retry hook panicked"`) || !strings.Contains(logs.String(), "queue on fire") {
		t.Errorf("logs do not report the panic:\n%s", logs.String())
	}
}
