package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/drainpipe/drainpipe/test/awsfake"
)

// The queue every test batch comes from (the fake knows it: see newLive).
const (
	queueAccount = "123456789012"
	queueName    = "drainpipe"
	queueARN     = "arn:aws:sqs:" + awsfake.Region + ":" + queueAccount + ":" + queueName
)

// message is one SQS message of a batch.
type message struct {
	id           string
	body         []byte
	receiveCount int // ApproximateReceiveCount; 0 means 1
}

// sqsBatch is the event Lambda's SQS event source sends for msgs, for
// functions that reach no queue (dry run, records refused before any AWS
// call): the receipt handles are made up. Batches for a function that may
// change visibility come from live.batch, whose handles the queue issued.
func sqsBatch(t *testing.T, msgs ...message) []byte {
	t.Helper()
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	recs := make([]events.SQSMessage, 0, len(msgs))
	for _, m := range msgs {
		recs = append(recs, events.SQSMessage{
			MessageId:     m.id,
			ReceiptHandle: "AQEB" + m.id,
			Body:          string(m.body),
			Attributes: map[string]string{
				"ApproximateReceiveCount":          strconv.Itoa(max(m.receiveCount, 1)),
				"SentTimestamp":                    now,
				"SenderId":                         "AIDAIENQZJOLO23YVJ4VO",
				"ApproximateFirstReceiveTimestamp": now,
			},
			MessageAttributes: map[string]events.SQSMessageAttribute{},
			EventSource:       "aws:sqs",
			EventSourceARN:    queueARN,
			AWSRegion:         awsfake.Region,
		})
	}
	return encodeBatch(t, recs)
}

// batch is the event for msgs received from l's queue: each record is in
// flight under the receipt handle the queue issued on its receiveCount-th
// delivery (l.receipt returns it). A message id batch saw before is the
// same queue message received again. The record keeps the test's message
// id, which the logs and batch item failures name.
func (l *live) batch(t *testing.T, msgs ...message) []byte {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	recs := make([]events.SQSMessage, 0, len(msgs))
	for _, m := range msgs {
		rec, seen := l.records[m.id]
		if !seen {
			got, err := l.aws.Deliver(l.queue, string(m.body))
			if err != nil {
				t.Fatal(err)
			}
			rec = got[0]
		}
		for seen || receiveCount(rec) < max(m.receiveCount, 1) {
			var err error
			if rec, err = l.aws.Redeliver(l.queue, rec); err != nil {
				t.Fatal(err)
			}
			seen = false
		}
		rec.MessageId = m.id
		l.records[m.id] = rec
		recs = append(recs, rec)
	}
	return encodeBatch(t, recs)
}

func receiveCount(rec events.SQSMessage) int {
	n, _ := strconv.Atoi(rec.Attributes["ApproximateReceiveCount"])
	return n
}

// receipt is the receipt handle of message id's latest delivery by l.batch.
func (l *live) receipt(id string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.records[id].ReceiptHandle
}

func encodeBatch(t *testing.T, recs []events.SQSMessage) []byte {
	t.Helper()
	b, err := json.Marshal(events.SQSEvent{Records: recs})
	if err != nil {
		t.Fatalf("encoding SQS event: %v", err)
	}
	return b
}

// eventBody reads a message body shared with the parser's tests.
func eventBody(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "internal", "event", "testdata", name))
	if err != nil {
		t.Fatalf("reading fixture: %v", err)
	}
	return b
}

// freshEvent is an EventBridge fixture re-stamped to now (so no age limit
// makes it stale) and edited by edit, e.g. to name another instance.
func freshEvent(t *testing.T, name string, edit func(ev map[string]any)) []byte {
	t.Helper()
	var ev map[string]any
	if err := json.Unmarshal(eventBody(t, name), &ev); err != nil {
		t.Fatalf("decoding fixture %s: %v", name, err)
	}
	ev["time"] = time.Now().UTC().Format(time.RFC3339)
	if edit != nil {
		edit(ev)
	}
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatalf("encoding fixture %s: %v", name, err)
	}
	return b
}

// forEC2Instance points an aws.ec2 event at another instance and region.
func forEC2Instance(id, region string) func(map[string]any) {
	return func(ev map[string]any) {
		ev["region"] = region
		ev["resources"] = []any{fmt.Sprintf("arn:aws:ec2:%s:%s:instance/%s", region, ev["account"], id)}
		ev["detail"].(map[string]any)["instance-id"] = id
	}
}

// forLifecycle points an Auto Scaling lifecycle event at an instance, group,
// hook and token.
func forLifecycle(id, asg, hook, token, region string) func(map[string]any) {
	return func(ev map[string]any) {
		ev["region"] = region
		d := ev["detail"].(map[string]any)
		d["EC2InstanceId"] = id
		d["AutoScalingGroupName"] = asg
		d["LifecycleHookName"] = hook
		d["LifecycleActionToken"] = token
	}
}

// batchResponse is the function's answer to an SQS batch.
func batchResponse(t *testing.T, body []byte) events.SQSEventResponse {
	t.Helper()
	var r events.SQSEventResponse
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("decoding the batch response %s: %v", body, err)
	}
	return r
}

// failedIDs lists the message ids the response asks SQS to redeliver.
func failedIDs(r events.SQSEventResponse) []string {
	ids := []string{}
	for _, f := range r.BatchItemFailures {
		ids = append(ids, f.ItemIdentifier)
	}
	return ids
}
