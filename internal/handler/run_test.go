package handler

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"
)

func rebalanceFor(n int) events.SQSMessage {
	id := fmt.Sprintf("i-%017x", n)
	return msg(fmt.Sprintf("m%d", n), `{"version":"0","id":"`+fmt.Sprintf("%08x-0000-4000-8000-%012x", n, n)+`","detail-type":"EC2 Instance Rebalance Recommendation",
		"source":"aws.ec2","account":"123456789012","time":"2026-11-20T10:00:00Z","region":"eu-west-1",
		"detail":{"instance-id":"`+id+`"}}`, "1")
}

func batchOf(n int) events.SQSEvent {
	var b events.SQSEvent
	for i := 1; i <= n; i++ {
		b.Records = append(b.Records, rebalanceFor(i))
	}
	return b
}

// barrierActor lets tasks through in groups of exactly size: each task
// waits until size tasks are in flight together, and counts the most ever
// in flight. Were the handler to run fewer than size at once, the tasks
// would wait until the test's deadline and be reported for retry.
type barrierActor struct {
	size int

	mu       sync.Mutex
	inFlight int
	maxSeen  int
	arrived  int
	gate     chan struct{}
}

func (a *barrierActor) Act(ctx context.Context, _ Task) Result {
	a.mu.Lock()
	a.inFlight++
	a.maxSeen = max(a.maxSeen, a.inFlight)
	if a.gate == nil {
		a.gate = make(chan struct{})
	}
	gate := a.gate
	a.arrived++
	if a.arrived == a.size {
		close(gate)
		a.arrived, a.gate = 0, nil
	}
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.inFlight--
		a.mu.Unlock()
	}()
	select {
	case <-gate:
		return Result{Status: StatusDone}
	case <-ctx.Done():
		return Result{Status: StatusRetry, Reason: "barrier never filled"}
	}
}

func TestHandleConcurrencyLimit(t *testing.T) {
	const limit, tasks = 3, 9
	actor := &barrierActor{size: limit}
	h := New(Options{Actor: actor, Concurrency: limit})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := h.Handle(ctx, batchOf(tasks))
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("Handle = %+v, %v; want every record done", resp, err)
	}
	if actor.maxSeen != limit {
		t.Errorf("at most %d tasks ran at once, want exactly the limit %d", actor.maxSeen, limit)
	}
}

// blockingActor finishes the first task and blocks every later one until
// its context ends.
type blockingActor struct {
	mu      sync.Mutex
	calls   int
	blocked chan struct{} // closed when a task is blocked
}

func (a *blockingActor) Act(ctx context.Context, t Task) Result {
	a.mu.Lock()
	a.calls++
	first := a.calls == 1
	a.mu.Unlock()
	if first {
		return Result{Status: StatusDone}
	}
	close(a.blocked)
	<-ctx.Done()
	return Result{Status: StatusRetry, Reason: "context ended"}
}

func TestHandleCancelledContextRetriesUnfinished(t *testing.T) {
	actor := &blockingActor{blocked: make(chan struct{})}
	h := New(Options{Actor: actor, Concurrency: 1})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-actor.blocked
		cancel()
	}()
	resp, err := h.Handle(ctx, batchOf(4))
	if err != nil {
		t.Fatal(err)
	}
	// m1 finished; m2 was running when the context ended; m3 and m4 never
	// started.
	if diff := cmp.Diff([]string{"m2", "m3", "m4"}, failures(resp)); diff != "" {
		t.Errorf("batch item failures (-want +got):\n%s", diff)
	}
}

func TestHandleDeadlineReserve(t *testing.T) {
	deadline := time.Now().Add(time.Hour)
	var got time.Time
	actor := actorFunc(func(ctx context.Context, _ Task) Result {
		got, _ = ctx.Deadline()
		return Result{Status: StatusDone}
	})
	h := New(Options{Actor: actor, DeadlineReserve: 10 * time.Minute})
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	if _, err := h.Handle(ctx, batchOf(1)); err != nil {
		t.Fatal(err)
	}
	if want := deadline.Add(-10 * time.Minute); !got.Equal(want) {
		t.Errorf("actor's deadline = %v, want the Lambda deadline less the reserve, %v", got, want)
	}
}

type actorFunc func(context.Context, Task) Result

func (f actorFunc) Act(ctx context.Context, t Task) Result { return f(ctx, t) }

func TestHandleActorPanicIsRetried(t *testing.T) {
	actor := actorFunc(func(_ context.Context, t Task) Result {
		if t.InstanceID == fmt.Sprintf("i-%017x", 2) {
			panic("boom")
		}
		return Result{Status: StatusDone}
	})
	h := New(Options{Actor: actor})
	resp, err := h.Handle(context.Background(), batchOf(3))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"m2"}, failures(resp)); diff != "" {
		t.Errorf("batch item failures (-want +got):\n%s", diff)
	}
}

func TestHandleUnknownStatusIsRetried(t *testing.T) {
	h := New(Options{Actor: actorFunc(func(context.Context, Task) Result { return Result{Status: 42} })})
	resp, _ := h.Handle(context.Background(), batchOf(1))
	if diff := cmp.Diff([]string{"m1"}, failures(resp)); diff != "" {
		t.Errorf("batch item failures (-want +got):\n%s", diff)
	}
}

func TestDryRun(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	h := New(Options{Actor: DryRun{Log: log}, Log: log})
	resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		msg("hook", body(t, "asg-lifecycle-terminating.json"), "1"),
	}})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("Handle = %+v, %v; want done", resp, err)
	}
	out := logs.String()
	if strings.Contains(out, "71514b9d-6a40-4b26-8523-05e7eEXAMPLE") {
		t.Errorf("dry run logged the lifecycle action token:\n%s", out)
	}
	want := "would cordon and drain the node of i-0598c7d356eba48d7, then complete hook my-asg/my-termination-hook"
	if !strings.Contains(out, want) {
		t.Errorf("dry run log does not say %q:\n%s", want, out)
	}
}
