package handler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// ErrGaveWay is the cause of a batch's Yielding context once it gave way.
var ErrGaveWay = errors.New("the batch gave way to messages waiting in its queue")

// GiveWay lets a batch hand its unfinished records back to the queue while
// other messages wait behind it. The event source runs at most
// MaximumConcurrency batches at once, each until its last drain ends: in a
// wave larger than MaximumConcurrency × batch size, the nodes of the
// batches left in the queue would be cordoned only once a batch ahead of
// them ended, minutes later at scale, while their Spot deadlines run. A
// batch asks the queue as soon as each of its tasks has cordoned its node
// (Cordoned) or ended, and its drains evict only once it has asked; when
// messages wait it gives way before any eviction, and they are cordoned
// within a second or two. The nodes given back stay cordoned and each
// drain starts, or resumes, on its record's redelivery. Only a batch whose
// unfinished records are all on their first delivery gives way, so it
// costs a record one delivery, once, and never its last (the caller turns
// it off when the queue's maxReceiveCount leaves fewer than two more).
type GiveWay struct {
	// After is the longest a batch runs before it first asks the queue,
	// when some task never reports its node cordoned (a launch waiting for
	// its node, a slow lookup); 0 turns giving way off.
	After time.Duration
	// Hold is how long the records given back stay away, so the waiting
	// messages are received first; a task's RetryWithin caps it. A record
	// whose instances have no deadline (a hook that can wait) stays away
	// twice as long, so the environments freed take the records racing a
	// deadline first.
	Hold time.Duration
	// FirstPass is how long a batch about to give way lets its drains
	// evict first: an eviction sent goes on after the invocation ends, so
	// the pods of a node given back leave it while its record waits for
	// an environment, as they must before a Spot deadline. 0 gives way
	// before any eviction.
	FirstPass time.Duration
	// Waiting tells how many messages are visible in the queue.
	Waiting func(ctx context.Context, queueARN string) (int, error)
}

func (g GiveWay) on() bool { return g.After > 0 && g.Waiting != nil }

type yieldKey struct{}

// never is a context that never ends: Yielding's answer outside a batch
// that may give way.
var never = context.Background()

// Yielding returns the context that ends, with cause ErrGaveWay, when the
// task's batch gives way; a task stops what it was waiting on (a drain, a
// node to become Ready) and reports a retry. It never ends for a task of a
// batch that may not give way.
func Yielding(ctx context.Context) context.Context {
	if y, ok := ctx.Value(yieldKey{}).(context.Context); ok {
		return y
	}
	return never
}

// WithYield returns ctx carrying the context Yielding returns (tests and
// the batch's run).
func WithYield(ctx, yield context.Context) context.Context {
	return context.WithValue(ctx, yieldKey{}, yield)
}

// What a batch that may give way did, as its "batch handled" line says
// (give_way): why a batch ran to its end while a wave waited is the first
// question an operator asks of a slow wave.
const (
	wayGave        = "gave way"
	wayFirstPass   = "drains ended in the first pass"
	wayNoneWaiting = "no messages waiting"
	wayRedelivered = "records delivered before"
	wayEndedFirst  = "batch ended before giving way"
	wayUnknown     = "could not ask the queue"
)

func gaveWay(waiting int, after time.Duration) error {
	return fmt.Errorf("%w (%d messages waiting after %s): the nodes stay cordoned and their drains resume on redelivery",
		ErrGaveWay, waiting, after.Round(time.Millisecond))
}

// watch asks once whether messages wait in the queue: when every task
// has cordoned its node or ended (ho.ready), or After at the latest, and
// only while the batch's unfinished tasks (open) are all on their first
// delivery. When some wait, it gives way and returns the tasks it gave
// back; otherwise the batch drains to its end. It asks only once: later in
// a wave, what waits is mostly records given back, already cordoned, and a
// batch giving way to them would only restart its drains elsewhere. Its
// answer, whatever it is, lets the drains waiting on Cordoned go on. run
// calls it only for a batch that may give way. It returns nil when ctx
// (the batch's wait) ends first.
func (h *Handler) watch(ctx context.Context, queue string, tasks []Task, open func() []int, ho *handoff, give context.CancelCauseFunc) ([]int, string) {
	defer ho.decide()
	g := h.opts.GiveWay
	start := time.Now()
	t := time.NewTimer(g.After)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return nil, wayEndedFirst
	case <-t.C:
	case <-ho.ready:
	}
	unfinished := open()
	if len(unfinished) == 0 {
		return nil, wayEndedFirst
	}
	if !mayGiveWay(tasks, unfinished) {
		return nil, wayRedelivered // a redelivered record runs to its end: the batch cannot end sooner
	}
	n, err := g.Waiting(ctx, queue)
	switch {
	case err != nil && ctx.Err() == nil:
		h.opts.Log.LogAttrs(ctx, slog.LevelWarn, "cannot tell whether messages wait; not giving way",
			slog.String("queue_arn", queue), slog.Any("error", err))
		return nil, wayUnknown
	case err != nil:
		return nil, wayEndedFirst
	case n > 0:
		if g.FirstPass > 0 {
			ho.decide() // the drains send their first evictions before the records go back
			pass := time.NewTimer(g.FirstPass)
			defer pass.Stop()
			select {
			case <-ctx.Done(): // the batch ended: its drains did, or its time
				if len(open()) == 0 {
					return nil, wayFirstPass
				}
				return nil, wayEndedFirst
			case <-pass.C:
			}
			if unfinished = open(); len(unfinished) == 0 {
				return nil, wayFirstPass
			}
		}
		why := gaveWay(n, time.Since(start))
		h.opts.Log.LogAttrs(ctx, slog.LevelInfo, "batch gives way", slog.Int("waiting", n),
			slog.Int("tasks", len(unfinished)), slog.String("reason", why.Error()))
		give(why) // before decide: the drains waiting see the batch gave way
		return unfinished, wayGave
	}
	return nil, wayNoneWaiting
}

// mayGiveWay: every task left is on its first delivery and no sweep.
func mayGiveWay(tasks []Task, unfinished []int) bool {
	for _, i := range unfinished {
		if tasks[i].ReceiveCount > 1 || isSweep(tasks[i]) {
			return false
		}
	}
	return true
}

// queueOf is the queue the batch came from: its first record's
// EventSourceARN (one event source mapping reads one queue).
func queueOf(records []events.SQSMessage) string {
	for _, r := range records {
		if r.EventSourceARN != "" {
			return r.EventSourceARN
		}
	}
	return ""
}
