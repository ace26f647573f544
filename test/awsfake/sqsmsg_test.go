package awsfake

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// TestSQSMessageMoveTask: as SQS, the move task refuses a source that is no
// queue's dead-letter queue, and moves a dead-letter queue's messages back
// to the queue each came from as new messages.
func TestSQSMessageMoveTask(t *testing.T) {
	s, ctx := setup(t)
	client := sqs.NewFromConfig(s.Config())
	dlq, err := s.CreateQueue("123456789012", "dlq", QueueOptions{})
	if err != nil {
		t.Fatal(err)
	}
	src, err := s.CreateQueue("123456789012", "work", QueueOptions{MaxReceiveCount: 1, DeadLetterURL: dlq})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.StartMessageMoveTask(ctx, &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(QueueARN(src))}); code(err) != "InvalidParameterValue" {
		t.Errorf("move task from a queue that is no dead-letter queue: %v, want InvalidParameterValue", err)
	}
	sent, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(src), MessageBody: aws.String("body")})
	if err != nil {
		t.Fatal(err)
	}
	// The first receive takes it and lets it go; the second dead-letters it.
	first, err := s.ReceiveMessages(ctx, src, 1, 0)
	if err != nil || len(first) != 1 {
		t.Fatalf("first receive: %v, %v", first, err)
	}
	if err := s.ChangeVisibility(src, first[0].ReceiptHandle, 0); err != nil {
		t.Fatal(err)
	}
	if again, err := s.ReceiveMessages(ctx, src, 1, 0); err != nil || len(again) != 0 {
		t.Fatalf("second receive: %v, %v; want it dead-lettered", again, err)
	}
	srcs, err := client.ListDeadLetterSourceQueues(ctx, &sqs.ListDeadLetterSourceQueuesInput{QueueUrl: aws.String(dlq)})
	if err != nil || len(srcs.QueueUrls) != 1 || srcs.QueueUrls[0] != src {
		t.Fatalf("dead-letter sources: %v, %v; want [%s]", srcs, err, src)
	}
	if _, err := client.StartMessageMoveTask(ctx, &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(QueueARN(dlq))}); err != nil {
		t.Fatal(err)
	}
	got, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(src), MessageSystemAttributeNames: []types.MessageSystemAttributeName{"All"}})
	if err != nil || len(got.Messages) != 1 {
		t.Fatalf("after the move: %v, %v; want the message back", got, err)
	}
	m := got.Messages[0]
	if aws.ToString(m.Body) != "body" || aws.ToString(m.MessageId) == aws.ToString(sent.MessageId) || m.Attributes["ApproximateReceiveCount"] != "1" {
		t.Errorf("moved message %+v; want the body under a new id, received once", m)
	}
}
