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

	"github.com/drainpipe/drainpipe/internal/event"
)

// TestHandleRejectsForgedSNSEnvelopes: an SNS envelope is acted on only
// when it names one of the deployment's topics, of the function's
// account, and SNS's own certificate host. A forged one (another account's
// topic, an attacker's certificate URL) is rejected with its reason,
// deleted and never retried; the genuine one is handled.
func TestHandleRejectsForgedSNSEnvelopes(t *testing.T) {
	const topic = "arn:aws:sns:us-west-2:123456789012:drainpipe-events"
	genuine := body(t, "sns-asg-lifecycle-terminating.json") // hook for i-0598c7d356eba48d7 at 10:15:16
	forge := func(instance string, pairs ...string) string {
		return strings.NewReplacer(append(pairs, "i-0598c7d356eba48d7", instance)...).Replace(genuine)
	}
	actor := &recordingActor{}
	var logs bytes.Buffer
	h := New(Options{
		Actor: actor, Log: slog.New(slog.NewJSONHandler(&logs, nil)),
		Now:    func() time.Time { return time.Date(2026, 11, 20, 10, 16, 0, 0, time.UTC) },
		Accept: event.Shapes{event.ShapeEventBridge, event.ShapeSNS},
		Topics: []string{topic},
	})
	ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{
		AwsRequestID: "req-1", InvokedFunctionArn: "arn:aws:lambda:us-west-2:123456789012:function:drainpipe",
	})
	resp, err := h.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{
		msg("genuine", genuine, "1"),
		msg("forged", forge("i-0000000000000000a",
			"arn:aws:sns:us-west-2:123456789012:drainpipe-events", "arn:aws:sns:us-west-2:999999999999:drainpipe-events",
			"https://sns.us-west-2.amazonaws.com/SimpleNotificationService-0000000000000000000000.pem", "https://attacker.example/cert.pem"), "1"),
		msg("foreign-topic", forge("i-0000000000000000b", "123456789012:drainpipe-events", "999999999999:drainpipe-events"), "1"),
		msg("unlisted-topic", forge("i-0000000000000000c", "123456789012:drainpipe-events", "123456789012:other-topic"), "1"),
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
	if len(acted) != 1 || acted[0] != "i-0598c7d356eba48d7" {
		t.Errorf("instances acted on = %v, want only the genuine notification's", acted)
	}
	checkOutcomes(t, &logs, map[string]string{
		"genuine":        "done",
		"forged":         `rejected:SNS signing certificate URL "https://attacker.example/cert.pem" is not SNS's host sns.us-west-2.amazonaws.com`,
		"foreign-topic":  "rejected:is of account 999999999999, not this function's 123456789012",
		"unlisted-topic": "rejected:is not one of the subscribed topics (DRAINPIPE_SNS_TOPICS)",
	})
}
