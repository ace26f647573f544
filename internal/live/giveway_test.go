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
	"github.com/drainpipe/drainpipe/test/awsfake"
)

// drainingActor drains until its batch gives way.
type drainingActor struct{}

func (drainingActor) Act(ctx context.Context, _ handler.Task) handler.Result {
	select {
	case <-handler.Yielding(ctx).Done():
		return handler.Result{Status: handler.StatusRetry, Reason: "gave way"}
	case <-ctx.Done():
		return handler.Result{Status: handler.StatusRetry, Reason: "deadline"}
	}
}

// With a message waiting in the queue (SQS's real attribute, through the
// SDK), a first delivery's batch gives way: its record is handed back
// for the give-way hold.
func TestNewHandlerGivesWay(t *testing.T) {
	body, err := os.ReadFile(filepath.Join("..", "event", "testdata", "eventbridge-spot-interruption.json"))
	if err != nil {
		t.Fatal(err)
	}
	fake := awsfake.New()
	t.Cleanup(fake.Close)
	queue := fake.AddQueue("123456789012", "drainpipe")
	recs, err := fake.Deliver(queue, string(body))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fake.SendMessage(queue, string(body)); err != nil { // waiting behind the batch
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.MaxEventAge, cfg.GiveWayAfter = 0, time.Millisecond
	h := NewHandler(cfg, drainingActor{}, nil, nil, metrics.New(io.Discard), sqs.NewFromConfig(fake.Config()))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := h.Handle(ctx, events.SQSEvent{Records: recs})
	if err != nil || len(resp.BatchItemFailures) != 1 {
		t.Fatalf("Handle = %+v, %v; want the record handed back", resp, err)
	}
	want := []awsfake.VisibilityChange{{QueueURL: queue, ReceiptHandle: recs[0].ReceiptHandle, Timeout: int(giveWayHold / time.Second)}}
	if diff := cmp.Diff(want, fake.VisibilityChanges()); diff != "" {
		t.Errorf("visibility changes (-want +got):\n%s", diff)
	}
}

// Giving way is off without a queue client, with DRAINPIPE_GIVE_WAY_AFTER=0,
// and when the queue's maxReceiveCount leaves fewer than two deliveries
// after the first (the one given back would be the last).
func TestGiveWaySettings(t *testing.T) {
	fake := awsfake.New()
	t.Cleanup(fake.Close)
	api := sqs.NewFromConfig(fake.Config())
	for _, c := range []struct {
		name       string
		after      time.Duration
		maxReceive int
		queue      bool
		on         bool
	}{
		{"defaults", 10 * time.Second, 5, true, true},
		{"three deliveries", 10 * time.Second, 3, true, true},
		{"two deliveries", 10 * time.Second, 2, true, false},
		{"turned off", 0, 5, true, false},
		{"no queue client", 10 * time.Second, 5, false, false},
	} {
		cfg := config.Default()
		cfg.GiveWayAfter, cfg.MaxReceiveCount = c.after, c.maxReceive
		var g handler.GiveWay
		if c.queue {
			g = giveWay(cfg, newScheduler(cfg, api, nil))
		} else {
			g = giveWay(cfg, nil)
		}
		if on := g.After > 0 && g.Waiting != nil; on != c.on {
			t.Errorf("%s: giving way on %v, want %v", c.name, on, c.on)
		}
	}
}
