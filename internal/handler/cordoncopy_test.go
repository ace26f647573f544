package handler

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// A batch of the cordon queue is acted on as copies and never retried;
// the same batch from the work queue is neither.
func TestHandleCordonCopies(t *testing.T) {
	const (
		work   = "arn:aws:sqs:eu-west-1:123456789012:drainpipe"
		cordon = "arn:aws:sqs:eu-west-1:123456789012:drainpipe-cordon"
	)
	for _, tc := range []struct {
		queue        string
		wantCopy     bool
		wantFailures int
	}{{cordon, true, 0}, {work, false, 1}} {
		t.Run(tc.queue, func(t *testing.T) {
			actor := &recordingActor{answers: map[string]Result{
				"i-1234567890abcdef0": {Status: StatusRetry, Reason: "the API server did not answer"},
			}}
			var logs bytes.Buffer
			retried := 0
			h := New(Options{Actor: actor, CordonQueue: cordon, Log: slog.New(slog.NewJSONHandler(&logs, nil)),
				OnRetry: func(context.Context, []Retried) { retried++ }})
			m := msg("spot", body(t, "eventbridge-spot-interruption.json"), "1")
			m.EventSourceARN = tc.queue
			resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{m}})
			if err != nil || len(resp.BatchItemFailures) != tc.wantFailures {
				t.Fatalf("Handle = %+v, %v; want %d failures", resp, err, tc.wantFailures)
			}
			if len(actor.tasks) != 1 || actor.tasks[0].Copy != tc.wantCopy {
				t.Fatalf("tasks %+v, want one with Copy %t", actor.tasks, tc.wantCopy)
			}
			line := recordLines(t, &logs)["spot"]
			if tc.wantCopy && (line.Outcome != "ignored" || !strings.Contains(line.Reason, "the API server did not answer"+copyLeft) || retried != 0) {
				t.Errorf("copy's record: outcome %q, reason %q, retried %d times; want ignored with why, never retried",
					line.Outcome, line.Reason, retried)
			}
		})
	}
}
