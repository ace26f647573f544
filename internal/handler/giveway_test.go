package handler

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

const queueARN = "arn:aws:sqs:eu-west-1:123456789012:drainpipe"

// yieldingActor drains until the batch gives way (Yielding), or until the
// test releases it; it counts the tasks that saw the batch give way.
type yieldingActor struct {
	release chan struct{}
	arrived chan struct{} // optional: told of every task begun

	mu      sync.Mutex
	yielded int
}

func (a *yieldingActor) Act(ctx context.Context, _ Task) Result {
	if a.arrived != nil {
		a.arrived <- struct{}{}
	}
	select {
	case <-Yielding(ctx).Done():
		if !errors.Is(context.Cause(Yielding(ctx)), ErrGaveWay) {
			return Result{Status: StatusRetry, Reason: "yield without ErrGaveWay"}
		}
		a.mu.Lock()
		a.yielded++
		a.mu.Unlock()
		return Result{Status: StatusRetry, Reason: "gave way"}
	case <-a.release:
		return Result{Status: StatusDone, Reason: "drained"}
	case <-ctx.Done():
		return Result{Status: StatusRetry, Reason: "deadline"}
	}
}

// waitingQueue answers how many messages wait, and closes asked after its
// calls'th question.
type waitingQueue struct {
	waiting, calls int
	asked          chan struct{}
	before         func() // optional: run before the first answer

	mu   sync.Mutex
	n    int
	arns []string
}

func (q *waitingQueue) Waiting(_ context.Context, arn string) (int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.n == 0 && q.before != nil {
		q.before()
	}
	q.n++
	q.arns = append(q.arns, arn)
	if q.n == q.calls {
		close(q.asked)
	}
	return q.waiting, nil
}

func firstDelivery(n int, receiveCount string) events.SQSEvent {
	b := batchOf(n)
	for i := range b.Records {
		b.Records[i].EventSourceARN = queueARN
		b.Records[i].Attributes["ApproximateReceiveCount"] = receiveCount
	}
	return b
}

// A batch on its first delivery gives way to messages waiting in its queue:
// every unfinished task is told (Yielding), and its records are handed
// back with the give-way hold (twice it: rebalance records race no
// deadline).
func TestBatchGivesWayToWaitingMessages(t *testing.T) {
	actor := &yieldingActor{release: make(chan struct{}), arrived: make(chan struct{}, 3)}
	// The queue answers once all three drains are under way.
	q := &waitingQueue{waiting: 7, calls: 1, asked: make(chan struct{}), before: func() {
		for range 3 {
			<-actor.arrived
		}
	}}
	held := map[string]time.Duration{}
	var mu sync.Mutex
	h := New(Options{Actor: actor, Concurrency: 10,
		GiveWay: GiveWay{After: time.Nanosecond, Hold: 5 * time.Second, Waiting: q.Waiting},
		OnHold: func(_ context.Context, m events.SQSMessage, d time.Duration) {
			mu.Lock()
			held[m.MessageId] = d
			mu.Unlock()
		}})
	resp, err := h.Handle(context.Background(), firstDelivery(3, "1"))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.BatchItemFailures) != 3 || actor.yielded != 3 {
		t.Fatalf("%d records retried, %d tasks told to give way; want 3 and 3", len(resp.BatchItemFailures), actor.yielded)
	}
	for _, id := range []string{"m1", "m2", "m3"} {
		if held[id] != 10*time.Second {
			t.Errorf("record %s held %s, want twice the give-way hold, 10s", id, held[id])
		}
	}
	if len(q.arns) == 0 || q.arns[0] != queueARN {
		t.Errorf("asked about queues %v, want %s", q.arns, queueARN)
	}
}

// A batch whose records were delivered before never gives way (giving way
// costs a delivery, once), nor one with no message waiting; each runs to
// its end.
func TestBatchDoesNotGiveWay(t *testing.T) {
	for _, c := range []struct {
		name, receiveCount string
		waiting            int
		firstPass          time.Duration
		way                string // the "batch handled" line's give_way
	}{
		{"second delivery", "2", 7, 0, wayRedelivered},
		{"nothing waiting", "1", 0, 0, wayNoneWaiting},
		// Messages wait, but the drains end before the first pass does:
		// nothing is left to give back.
		{"drains ended in the first pass", "1", 7, time.Hour, wayFirstPass},
	} {
		t.Run(c.name, func(t *testing.T) {
			actor := &yieldingActor{release: make(chan struct{})}
			q := &waitingQueue{waiting: c.waiting, calls: 1, asked: make(chan struct{})}
			if c.receiveCount == "2" {
				q.calls = 1 << 30 // it must not even ask
				go func() { close(actor.release) }()
			} else {
				go func() { <-q.asked; close(actor.release) }()
			}
			var logs bytes.Buffer
			h := New(Options{Actor: actor, Concurrency: 10, Log: slog.New(slog.NewJSONHandler(&logs, nil)),
				GiveWay: GiveWay{After: time.Nanosecond, Hold: 5 * time.Second, FirstPass: c.firstPass, Waiting: q.Waiting}})
			resp, err := h.Handle(context.Background(), firstDelivery(3, c.receiveCount))
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.BatchItemFailures) != 0 || actor.yielded != 0 {
				t.Errorf("%d records retried, %d tasks gave way; want the batch to run to its end", len(resp.BatchItemFailures), actor.yielded)
			}
			if c.receiveCount == "2" && q.n != 0 {
				t.Errorf("asked the queue %d times for a batch that may not give way", q.n)
			}
			if way := batchLine(t, logs.String())["give_way"]; way != c.way {
				t.Errorf("batch handled: give_way %q, want %q", way, c.way)
			}
		})
	}
}

// batchLine is the "batch handled" line among logs.
func batchLine(t *testing.T, logs string) map[string]any {
	t.Helper()
	for l := range strings.Lines(logs) {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err == nil && m["msg"] == "batch handled" {
			return m
		}
	}
	t.Fatalf("no batch handled line in %s", logs)
	return nil
}

// The record's reason says it gave way, and how many messages waited.
func TestGaveWayReason(t *testing.T) {
	err := gaveWay(7, 12*time.Second)
	if !errors.Is(err, ErrGaveWay) || !strings.Contains(err.Error(), "7 messages") {
		t.Errorf("gaveWay = %v, want ErrGaveWay naming 7 messages", err)
	}
}
