package awsfake

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// receiveOne receives exactly one message or fails the test.
func receiveOne(ctx context.Context, t *testing.T, s *Server, url string) Received {
	t.Helper()
	got, err := s.ReceiveMessages(ctx, url, 10, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("received %d messages, want 1: %+v", len(got), got)
	}
	return got[0]
}

// batchCode changes the visibility of one handle through the SDK and
// returns the entry's failure code, "" on success.
func batchCode(ctx context.Context, t *testing.T, client *sqs.Client, url, handle string, timeout int32) string {
	t.Helper()
	e := entries(handle)
	e[0].VisibilityTimeout = timeout
	out, err := client.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(url), Entries: e})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Failed) > 0 {
		return aws.ToString(out.Failed[0].Code)
	}
	return ""
}

func TestQueueModelVisibilityReceiptsAndRedrive(t *testing.T) {
	s, ctx := setup(t)
	client := sqs.NewFromConfig(s.Config())
	dlq, err := s.CreateQueue("123456789012", "drainpipe-dlq", QueueOptions{})
	if err != nil {
		t.Fatal(err)
	}
	url, err := s.CreateQueue("123456789012", "drainpipe", QueueOptions{VisibilityTimeout: time.Hour, MaxReceiveCount: 2, DeadLetterURL: dlq})
	if err != nil {
		t.Fatal(err)
	}
	id, err := s.SendMessage(url, "hello")
	if err != nil {
		t.Fatal(err)
	}

	first := receiveOne(ctx, t, s, url)
	if first.MessageID != id || first.Body != "hello" || first.ReceiveCount != 1 {
		t.Errorf("first delivery = %+v", first)
	}
	if got, _ := s.ReceiveMessages(ctx, url, 10, 0); len(got) != 0 {
		t.Errorf("an in-flight message was received again: %+v", got)
	}
	if code := batchCode(ctx, t, client, url, "AQEBnever-issued", 5); code != "ReceiptHandleIsInvalid" {
		t.Errorf("unknown handle: code %q, want ReceiptHandleIsInvalid", code)
	}
	// Visible again at once: the handle's message is no longer in flight.
	if code := batchCode(ctx, t, client, url, first.ReceiptHandle, 0); code != "" {
		t.Fatalf("in-flight handle refused: %s", code)
	}
	if code := batchCode(ctx, t, client, url, first.ReceiptHandle, 5); code != "MessageNotInflight" {
		t.Errorf("handle of a visible message: code %q, want MessageNotInflight", code)
	}

	second := receiveOne(ctx, t, s, url)
	if second.ReceiveCount != 2 || second.ReceiptHandle == first.ReceiptHandle {
		t.Errorf("second delivery = %+v (first handle %s)", second, first.ReceiptHandle)
	}
	if code := batchCode(ctx, t, client, url, first.ReceiptHandle, 5); code != "ReceiptHandleIsInvalid" {
		t.Errorf("superseded handle: code %q, want ReceiptHandleIsInvalid", code)
	}
	_, err = client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
		QueueUrl: aws.String(url), ReceiptHandle: aws.String(second.ReceiptHandle), VisibilityTimeout: 0,
	})
	if err != nil {
		t.Fatalf("ChangeMessageVisibility: %v", err)
	}

	// The third receive finds it received maxReceiveCount times: redriven.
	if got, _ := s.ReceiveMessages(ctx, url, 10, 0); len(got) != 0 {
		t.Errorf("a message past maxReceiveCount was delivered: %+v", got)
	}
	dead := receiveOne(ctx, t, s, dlq)
	if dead.MessageID != id || dead.Body != "hello" {
		t.Errorf("dead letter = %+v", dead)
	}
	if err := s.DeleteMessage(dlq, dead.ReceiptHandle); err != nil {
		t.Fatal(err)
	}
	states, err := s.QueueMessages(url)
	if err != nil {
		t.Fatal(err)
	}
	if len(states) != 1 || !states[0].DeadLettered || len(states[0].Receives) != 2 {
		t.Errorf("source queue state = %+v", states)
	}
	if states, _ := s.QueueMessages(dlq); len(states) != 1 || states[0].DeletedAt.IsZero() {
		t.Errorf("dead-letter queue state = %+v", states)
	}
}

func TestQueueModelDeleteAndLongPoll(t *testing.T) {
	s, ctx := setup(t)
	url, err := s.CreateQueue("123456789012", "q", QueueOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan []Received, 1)
	go func() {
		r, _ := s.ReceiveMessages(ctx, url, 10, time.Minute)
		got <- r
	}()
	if _, err := s.SendMessage(url, "late"); err != nil {
		t.Fatal(err)
	}
	r := <-got // the long poll returns on the send, not after a minute
	if len(r) != 1 {
		t.Fatalf("long poll returned %+v", r)
	}
	if err := s.DeleteMessage(url, "AQEBforged"); err == nil {
		t.Error("deleting with a forged handle succeeded")
	}
	if err := s.DeleteMessage(url, r[0].ReceiptHandle); err != nil {
		t.Fatal(err)
	}
	if err := s.ChangeVisibility(url, r[0].ReceiptHandle, 0); err == nil {
		t.Error("changing the visibility of a deleted message succeeded")
	}
	if st, _ := s.QueueMessages(url); len(st) != 1 || st[0].DeletedAt.IsZero() || st[0].InFlight {
		t.Errorf("state after delete = %+v", st)
	}
}
