package awsfake

import (
	"fmt"
	"testing"

	"github.com/aws/aws-lambda-go/events"
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
	recs := deliver(t, s, queue, "a", "gone", "b")
	a, gone, b := recs[0].ReceiptHandle, recs[1].ReceiptHandle, recs[2].ReceiptHandle
	s.InvalidReceipts(gone)
	out, err := client.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{
		QueueUrl: aws.String(queue), Entries: entries(a, gone, b),
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
	want := []VisibilityChange{{QueueURL: queue, ReceiptHandle: a, Timeout: 15}, {QueueURL: queue, ReceiptHandle: b, Timeout: 15}}
	if diff := cmp.Diff(want, s.VisibilityChanges()); diff != "" {
		t.Errorf("visibility changes (-want +got):\n%s", diff)
	}
	call := s.CallsTo("ChangeMessageVisibilityBatch")[0]
	if call.Params.Get("QueueUrl") != queue || call.Params.Get("Entries.3.ReceiptHandle") != b || call.Params.Get("Entries.3.VisibilityTimeout") != "15" {
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
		QueueUrl: aws.String(queue), Entries: entries(deliver(t, s, queue, "a")[0].ReceiptHandle),
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(s.CallsTo("ChangeMessageVisibilityBatch")); n != 3 {
		t.Errorf("calls = %d, want 3 (two throttled, then served)", n)
	}
}

// deliver is Deliver, failing the test on error.
func deliver(t *testing.T, s *Server, queue string, bodies ...string) []events.SQSMessage {
	t.Helper()
	recs, err := s.Deliver(queue, bodies...)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// Every queue, AddQueue's too, refuses what SQS refuses: a handle it never
// issued, one superseded by a later receive, one whose message is no longer
// in flight; the handle of a message in flight is served.
func TestSQSQueuesRefuseForeignReceipts(t *testing.T) {
	s, ctx := setup(t)
	client := sqs.NewFromConfig(s.Config())
	queue := s.AddQueue("123456789012", "drainpipe")
	recs := deliver(t, s, queue, "superseded", "released", "held")
	again, err := s.Redeliver(queue, recs[0])
	if err != nil {
		t.Fatal(err)
	}
	if again.Attributes["ApproximateReceiveCount"] != "2" || again.ReceiptHandle == recs[0].ReceiptHandle || again.MessageId != recs[0].MessageId {
		t.Errorf("redelivered record = %+v, want message %s again, count 2, a new handle", again, recs[0].MessageId)
	}
	if err := s.ChangeVisibility(queue, recs[1].ReceiptHandle, 0); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, handle, want string }{
		{"never issued", "AQEBinvented", "ReceiptHandleIsInvalid"},
		{"superseded", recs[0].ReceiptHandle, "ReceiptHandleIsInvalid"},
		{"not in flight", recs[1].ReceiptHandle, "MessageNotInflight"},
		{"in flight", recs[2].ReceiptHandle, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
				QueueUrl: aws.String(queue), ReceiptHandle: aws.String(tt.handle), VisibilityTimeout: 15,
			})
			if code(err) != tt.want {
				t.Errorf("ChangeMessageVisibility(%s) error = %v, want code %q", tt.name, err, tt.want)
			}
		})
	}
	out, err := client.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{
		QueueUrl: aws.String(queue), Entries: entries("AQEBinvented", again.ReceiptHandle),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Failed) != 1 || aws.ToString(out.Failed[0].Id) != "0" || aws.ToString(out.Failed[0].Code) != "ReceiptHandleIsInvalid" || len(out.Successful) != 1 {
		t.Errorf("batch = %d served, failed %+v; want the invented handle refused, the live one served", len(out.Successful), out.Failed)
	}
}
