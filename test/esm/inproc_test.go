package esm_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/esm"
)

// TestMappingFunc runs an in-process function under the mapping: it sees
// the batch as Lambda's SQS event, and its partial batch response keeps
// the failed item for redrive while the others are deleted.
func TestMappingFunc(t *testing.T) {
	fake, url, dlq := queues(t, awsfake.QueueOptions{VisibilityTimeout: 200 * time.Millisecond, MaxReceiveCount: 1})
	ids := send(t, fake, url, "ok", "fail", "ok")
	fn := func(_ context.Context, payload []byte) ([]byte, error) {
		var ev events.SQSEvent
		if err := json.Unmarshal(payload, &ev); err != nil {
			return nil, err
		}
		resp := events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}
		for _, r := range ev.Records {
			if r.Body == "fail" {
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
			}
		}
		return json.Marshal(resp)
	}
	m := start(t, esm.Options{
		Fake: fake, QueueURL: url, QueueARN: "arn:aws:sqs:us-west-2:123456789012:fn", MaxConcurrency: 2, Func: fn,
	})
	for _, s := range settle(t, fake, url) {
		if fail := ids[s.ID] == "fail"; s.DeadLettered != fail {
			t.Errorf("message %q: dead-lettered %v, want %v", ids[s.ID], s.DeadLettered, fail)
		}
	}
	if dead, err := fake.QueueMessages(dlq); err != nil || len(dead) != 1 {
		t.Errorf("dead-letter queue lists %d messages (%v), want 1", len(dead), err)
	}
	if _, killed := m.Kill(); killed {
		t.Error("Kill signalled an in-process environment")
	}
	if len(m.Invocations()) == 0 {
		t.Error("no invocation recorded")
	}
}

// TestStartNeedsOneFunction refuses a mapping with both or neither of
// Bootstrap and Func.
func TestStartNeedsOneFunction(t *testing.T) {
	fake, url, _ := queues(t, awsfake.QueueOptions{})
	fn := func(context.Context, []byte) ([]byte, error) { return nil, nil }
	for _, o := range []esm.Options{{Fake: fake, QueueURL: url}, {Fake: fake, QueueURL: url, Bootstrap: "x", Func: fn}} {
		if m, err := esm.Start(o); err == nil {
			_ = m.Stop()
			t.Errorf("Start(%+v) succeeded, want an error", o)
		}
	}
}
