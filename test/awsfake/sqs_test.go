package awsfake

import (
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/google/go-cmp/cmp"
)

func entries(handles ...string) []types.ChangeMessageVisibilityBatchRequestEntry {
	var out []types.ChangeMessageVisibilityBatchRequestEntry
	for i, h := range handles {
		out = append(out, types.ChangeMessageVisibilityBatchRequestEntry{
			Id: aws.String(fmt.Sprint(i)), ReceiptHandle: aws.String(h), VisibilityTimeout: 15,
		})
	}
	return out
}

func TestSQSGetQueueURL(t *testing.T) {
	s, ctx := setup(t)
	client := sqs.NewFromConfig(s.Config())
	in := &sqs.GetQueueUrlInput{QueueName: aws.String("drainpipe"), QueueOwnerAWSAccountId: aws.String("123456789012")}
	if _, err := client.GetQueueUrl(ctx, in); code(err) != "QueueDoesNotExist" {
		t.Errorf("GetQueueUrl(unknown queue) error = %v, want QueueDoesNotExist", err)
	}
	want := s.AddQueue("123456789012", "drainpipe")
	out, err := client.GetQueueUrl(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if got := aws.ToString(out.QueueUrl); got != want || want != s.URL()+"/123456789012/drainpipe" {
		t.Errorf("QueueUrl = %q, want %q", got, want)
	}
	calls := s.CallsTo("GetQueueUrl")
	if len(calls) != 2 || calls[1].Service != ServiceSQS || !calls[1].Signed || calls[1].Params.Get("QueueName") != "drainpipe" ||
		calls[1].Params.Get("QueueOwnerAWSAccountId") != "123456789012" {
		t.Errorf("GetQueueUrl calls = %+v", calls)
	}
}

func TestSQSChangeMessageVisibilityBatch(t *testing.T) {
	s, ctx := setup(t)
	client := sqs.NewFromConfig(s.Config())
	queue := s.AddQueue("123456789012", "drainpipe")
	s.InvalidReceipts("gone")
	out, err := client.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{
		QueueUrl: aws.String(queue), Entries: entries("AQEBa", "gone", "AQEBb"),
	})
	if err != nil {
		t.Fatal(err)
	}
	var ok, failed []string
	for _, e := range out.Successful {
		ok = append(ok, aws.ToString(e.Id))
	}
	for _, e := range out.Failed {
		failed = append(failed, aws.ToString(e.Id)+":"+aws.ToString(e.Code))
	}
	if diff := cmp.Diff([]string{"0", "2"}, ok); diff != "" {
		t.Errorf("successful entries (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"1:ReceiptHandleIsInvalid"}, failed); diff != "" {
		t.Errorf("failed entries (-want +got):\n%s", diff)
	}
	want := []VisibilityChange{{QueueURL: queue, ReceiptHandle: "AQEBa", Timeout: 15}, {QueueURL: queue, ReceiptHandle: "AQEBb", Timeout: 15}}
	if diff := cmp.Diff(want, s.VisibilityChanges()); diff != "" {
		t.Errorf("visibility changes (-want +got):\n%s", diff)
	}
	call := s.CallsTo("ChangeMessageVisibilityBatch")[0]
	if call.Params.Get("QueueUrl") != queue || call.Params.Get("Entries.3.ReceiptHandle") != "AQEBb" || call.Params.Get("Entries.3.VisibilityTimeout") != "15" {
		t.Errorf("recorded params = %v", call.Params)
	}
}

// The whole call fails where SQS fails it, so a client bug shows.
func TestSQSChangeMessageVisibilityBatchErrors(t *testing.T) {
	s, ctx := setup(t)
	client := sqs.NewFromConfig(s.Config())
	queue := s.AddQueue("123456789012", "drainpipe")
	eleven := entries("1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11")
	dup := entries("a", "b")
	dup[1].Id = aws.String("0")
	badID := entries("a")
	badID[0].Id = aws.String("a.b")
	tests := []struct {
		name  string
		in    *sqs.ChangeMessageVisibilityBatchInput
		fault Fault
		want  string
	}{
		{"unknown queue", &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(s.URL() + "/123456789012/other"), Entries: entries("a")}, 0, "QueueDoesNotExist"},
		{"no entries", &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(queue), Entries: []types.ChangeMessageVisibilityBatchRequestEntry{}}, 0, "EmptyBatchRequest"},
		{"eleven entries", &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(queue), Entries: eleven}, 0, "TooManyEntriesInBatchRequest"},
		{"repeated id", &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(queue), Entries: dup}, 0, "BatchEntryIdsNotDistinct"},
		{"malformed id", &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(queue), Entries: badID}, 0, "InvalidBatchEntryId"},
		{"access denied", &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(queue), Entries: entries("a")}, AccessDenied, "AccessDenied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.fault != 0 {
				s.Inject("ChangeMessageVisibilityBatch", tt.fault, 1)
			}
			if _, err := client.ChangeMessageVisibilityBatch(ctx, tt.in); code(err) != tt.want {
				t.Errorf("error = %v, want %s", err, tt.want)
			}
		})
	}
	if got := s.VisibilityChanges(); len(got) != 0 {
		t.Errorf("visibility changed by failed calls: %+v", got)
	}
}

// Throttling is answered in SQS's own code, which the SDK retries.
func TestSQSThrottleRetried(t *testing.T) {
	s, ctx := setup(t)
	queue := s.AddQueue("123456789012", "drainpipe")
	s.Inject("ChangeMessageVisibilityBatch", Throttle, 2)
	_, err := sqs.NewFromConfig(s.Config()).ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{
		QueueUrl: aws.String(queue), Entries: entries("AQEBa"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(s.CallsTo("ChangeMessageVisibilityBatch")); n != 3 {
		t.Errorf("calls = %d, want 3 (two throttled, then served)", n)
	}
}
