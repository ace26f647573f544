package handler

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/google/go-cmp/cmp"

	"github.com/drainpipe/drainpipe/internal/event"
)

// TestHandleRejectsForgedEnvelopes: anyone able to send to the queue could
// write an envelope; only those from the function's own account and
// region, not dated in the future, in a shape the deployment wires, reach
// the actor. The rest are rejected (deleted, logged, counted), never
// retried.
func TestHandleRejectsForgedEnvelopes(t *testing.T) {
	spot := body(t, "eventbridge-spot-interruption.json") // account 123456789012, us-east-2, 10:00
	eventTime := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	actor := &recordingActor{}
	var logs bytes.Buffer
	h := New(Options{
		Actor: actor, Log: slog.New(slog.NewJSONHandler(&logs, nil)),
		Now:    func() time.Time { return eventTime.Add(time.Minute) },
		Accept: event.Shapes{event.ShapeEventBridge, event.ShapeASGDirect},
	})
	ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{
		AwsRequestID:       "req-1",
		InvokedFunctionArn: "arn:aws:lambda:us-east-2:123456789012:function:drainpipe",
	})
	futureSpot := strings.Replace(strings.Replace(spot, "2026-11-20T10:00:00Z", "2026-11-20T11:00:00Z", 1),
		"i-1234567890abcdef0", "i-0000000000000000f", -1)
	resp, err := h.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{
		msg("own", spot, "1"),
		msg("other-account", strings.Replace(strings.Replace(spot, `"account": "123456789012"`, `"account": "999999999999"`, 1), "i-1234567890abcdef0", "i-0000000000000000a", -1), "1"),
		msg("other-region", strings.Replace(strings.Replace(spot, `"region": "us-east-2"`, `"region": "eu-west-1"`, 1), "i-1234567890abcdef0", "i-0000000000000000b", -1), "1"),
		msg("future", futureSpot, "1"),
		msg("sns", body(t, "sns-asg-lifecycle-terminating.json"), "1"),
		msg("sns-confirmation", `{"Type":"SubscriptionConfirmation","Message":"confirm"}`, "1"),
		msg("direct-other-account", strings.Replace(body(t, "asg-lifecycle-terminating.json"), "123456789012", "999999999999", 1), "1"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.BatchItemFailures) != 0 {
		t.Errorf("batch item failures = %v, want none (rejections are never retried)", resp.BatchItemFailures)
	}
	var acted []string
	for id := range actor.byInstance() {
		acted = append(acted, id)
	}
	if diff := cmp.Diff([]string{"i-1234567890abcdef0"}, acted); diff != "" {
		t.Errorf("instances acted on (-want +got):\n%s", diff)
	}
	checkOutcomes(t, &logs, map[string]string{
		"own":                  "done",
		"other-account":        `rejected:account "999999999999"`,
		"other-region":         `rejected:region "eu-west-1"`,
		"future":               "rejected:in the future",
		"sns":                  "rejected:shape sns is not accepted",
		"sns-confirmation":     "rejected:shape sns is not accepted",
		"direct-other-account": `rejected:account "999999999999"`,
	})
}

// checkOutcomes checks each record's logged outcome and reason against
// want: message id to "outcome" or "outcome:part of the reason".
func checkOutcomes(t *testing.T, logs *bytes.Buffer, want map[string]string) {
	t.Helper()
	lines := recordLines(t, logs)
	for id, w := range want {
		outcome, reason, _ := strings.Cut(w, ":")
		if l := lines[id]; l.Outcome != outcome || !strings.Contains(l.Reason, reason) {
			t.Errorf("record %s: outcome %q reason %q, want %q with %q", id, l.Outcome, l.Reason, outcome, reason)
		}
	}
}

// TestHandleWithoutFunctionARN: outside Lambda (drainpipe run, tests)
// there is no function ARN, so account and region cannot be compared;
// future events are still refused.
func TestHandleWithoutFunctionARN(t *testing.T) {
	actor := &recordingActor{}
	var logs bytes.Buffer
	h := New(Options{Actor: actor, Log: slog.New(slog.NewJSONHandler(&logs, nil)),
		Now: func() time.Time { return time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC) }})
	if _, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		msg("future", body(t, "eventbridge-spot-interruption.json"), "1"),
		msg("direct", strings.Replace(body(t, "asg-lifecycle-terminating.json"), "2026-11-20T10:15:16.524Z", "2026-11-20T08:59:00Z", 1), "1"),
	}}); err != nil {
		t.Fatal(err)
	}
	lines := recordLines(t, &logs)
	if l := lines["future"]; l.Outcome != "rejected" || !strings.Contains(l.Reason, "future") {
		t.Errorf("future event: %+v, want rejected", l)
	}
	if l := lines["direct"]; l.Outcome != "done" {
		t.Errorf("direct hook without a function ARN: %+v, want done", l)
	}
}
