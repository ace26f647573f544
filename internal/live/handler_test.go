package live

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/google/go-cmp/cmp"

	"github.com/drainpipe/drainpipe/internal/config"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/metrics"
	"github.com/drainpipe/drainpipe/internal/redeliver"
	"github.com/drainpipe/drainpipe/test/awsfake"
)

// retryActor leaves every task to retry, within the given cap (0: none).
type retryActor struct{ within time.Duration }

func (a retryActor) Act(context.Context, handler.Task) handler.Result {
	return handler.Result{Status: handler.StatusRetry, Reason: "blocked", RetryWithin: a.within}
}

// The handler hastens retried records through the queue client it is given,
// by the configured delay, cut to the cap of the hooks they left pending;
// without a client, or with a zero delay and no cap, it does not.
func TestNewHandlerHastensRetries(t *testing.T) {
	body, err := os.ReadFile(filepath.Join("..", "event", "testdata", "eventbridge-spot-interruption.json"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		delay   time.Duration
		within  time.Duration
		withSQS bool
		want    int // the visibility timeout set, s; 0: none
	}{
		{"configured", 10 * time.Second, 0, true, 20}, // second delivery: 2 × 10 s
		{"zero delay", 0, 0, true, 0},
		{"no queue client", 10 * time.Second, 0, false, 0},
		{"hook pending", 10 * time.Second, 12 * time.Second, true, 12},
		{"hook pending, zero delay", 0, 12 * time.Second, true, 12},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := awsfake.New()
			t.Cleanup(fake.Close)
			queue := fake.AddQueue("123456789012", "drainpipe")
			first, err := fake.Deliver(queue, string(body))
			if err != nil {
				t.Fatal(err)
			}
			rec, err := fake.Redeliver(queue, first[0]) // its second delivery
			if err != nil {
				t.Fatal(err)
			}
			batch := events.SQSEvent{Records: []events.SQSMessage{rec}}
			cfg := config.Default()
			cfg.MaxEventAge, cfg.RetryDelay = 0, tt.delay
			var api redeliver.API
			if tt.withSQS {
				api = sqs.NewFromConfig(fake.Config())
			}
			h := NewHandler(cfg, retryActor{within: tt.within}, nil, nil, metrics.New(io.Discard), api)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			resp, err := h.Handle(ctx, batch)
			if err != nil || len(resp.BatchItemFailures) != 1 {
				t.Fatalf("Handle = %+v, %v; want the record retried", resp, err)
			}
			var want []awsfake.VisibilityChange
			if tt.want > 0 {
				want = []awsfake.VisibilityChange{{QueueURL: queue, ReceiptHandle: rec.ReceiptHandle, Timeout: tt.want}}
			}
			if diff := cmp.Diff(want, fake.VisibilityChanges()); diff != "" {
				t.Errorf("visibility changes (-want +got):\n%s", diff)
			}
		})
	}
}
