package handler

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/internal/event"
)

// cordoningActor cordons (Cordoned), waits for its batch's decision, and
// then drains until released; it reports what the decision was.
type cordoningActor struct {
	release  chan struct{}
	evicting chan struct{} // told when a drain starts evicting, when set
}

func (a *cordoningActor) Act(ctx context.Context, _ Task) Result {
	<-Cordoned(ctx)
	if errors.Is(context.Cause(Yielding(ctx)), ErrGaveWay) {
		return Result{Status: StatusRetry, Reason: "gave way before evicting"}
	}
	if a.evicting != nil {
		a.evicting <- struct{}{}
	}
	select {
	case <-a.release:
		return Result{Status: StatusDone, Reason: "drained"}
	case <-Yielding(ctx).Done():
		return Result{Status: StatusRetry, Reason: "gave way after its first evictions"}
	case <-ctx.Done():
		return Result{Status: StatusRetry, Reason: "deadline"}
	}
}

// A batch asks the queue as soon as every task has cordoned its node, not
// after GiveWay.After, and its drains wait for the answer: with messages
// waiting it gives way before any of them evicts; with none, they go on.
func TestBatchAsksOnceItsNodesAreCordoned(t *testing.T) {
	for _, c := range []struct {
		name    string
		waiting int
		retried int
	}{{"messages wait", 4, 3}, {"nothing waits", 0, 0}} {
		t.Run(c.name, func(t *testing.T) {
			actor := &cordoningActor{release: make(chan struct{})}
			q := &waitingQueue{waiting: c.waiting, calls: 1, asked: make(chan struct{})}
			if c.waiting == 0 {
				go func() { <-q.asked; close(actor.release) }()
			}
			h := New(Options{Actor: actor, Concurrency: 10,
				GiveWay: GiveWay{After: time.Hour, Hold: 5 * time.Second, Waiting: q.Waiting}})
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			resp, err := h.Handle(ctx, firstDelivery(3, "1"))
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.BatchItemFailures) != c.retried || q.n != 1 {
				t.Errorf("%d records retried after %d questions; want %d after one", len(resp.BatchItemFailures), q.n, c.retried)
			}
		})
	}
}

// With a first pass, a batch that gives way lets every drain evict first,
// and only then hands the records back: the pods of the nodes given back
// leave them while their records wait.
func TestBatchGivingWayEvictsFirst(t *testing.T) {
	actor := &cordoningActor{release: make(chan struct{}), evicting: make(chan struct{}, 3)}
	q := &waitingQueue{waiting: 4, calls: 1, asked: make(chan struct{})}
	h := New(Options{Actor: actor, Concurrency: 10,
		GiveWay: GiveWay{After: time.Hour, Hold: 5 * time.Second, FirstPass: time.Millisecond, Waiting: q.Waiting}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := h.Handle(ctx, firstDelivery(3, "1"))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.BatchItemFailures) != 3 || len(actor.evicting) != 3 {
		t.Errorf("%d records retried, %d drains evicted first; want 3 and 3", len(resp.BatchItemFailures), len(actor.evicting))
	}
}

// Outside a batch that may give way, Cordoned does not hold a drain.
func TestCordonedOutsideAGivingBatch(t *testing.T) {
	select {
	case <-Cordoned(context.Background()):
	default:
		t.Error("Cordoned holds a task no batch decides for")
	}
}

// Records given back come back deadlines first: a task whose instance
// has a deadline holds for the give-way hold, one without (a hook that can
// wait) for twice it.
func TestGivenBackDeadlinesFirst(t *testing.T) {
	tasks := []Task{
		{InstanceID: "i-spot", Interruptions: []event.Interruption{{Kind: event.KindSpotInterruption, Deadline: time.Unix(1e9, 0)}}},
		{InstanceID: "i-hook", Interruptions: []event.Interruption{{Kind: event.KindASGLifecycle}}},
	}
	results := []taskResult{{Result: Result{Status: StatusRetry}, finished: true}, {Result: Result{Status: StatusRetry}, finished: true}}
	for i, want := range []time.Duration{5 * time.Second, 10 * time.Second} {
		hold, _ := comeBack(&record{tasks: []int{i}}, tasks, results, []int{0, 1}, 5*time.Second)
		if hold != want {
			t.Errorf("%s held %s, want %s", tasks[i].InstanceID, hold, want)
		}
	}
}

// Tasks are dispatched deadlines first: with one slot, the instances
// racing a deadline are acted on before the hooks that can wait, each in
// the batch's order.
func TestDispatchDeadlinesFirst(t *testing.T) {
	spot := func(id string) Task {
		return Task{InstanceID: id, Interruptions: []event.Interruption{{Kind: event.KindSpotInterruption, Deadline: time.Unix(1e9, 0)}}}
	}
	hook := func(id string) Task {
		return Task{InstanceID: id, Interruptions: []event.Interruption{{Kind: event.KindASGLifecycle}}}
	}
	tasks := []Task{hook("h1"), spot("s1"), hook("h2"), spot("s2")}
	var got []string
	for _, i := range deadlinesFirst(tasks) {
		got = append(got, tasks[i].InstanceID)
	}
	if want := []string{"s1", "s2", "h1", "h2"}; !slices.Equal(got, want) {
		t.Errorf("dispatch order %v, want %v", got, want)
	}
}
