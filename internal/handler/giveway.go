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
// them ended, minutes later at scale, while their Spot deadlines run.
// Giving way, they are cordoned within seconds; the nodes given back stay
// cordoned, the evictions already issued go on, and each drain resumes on
// its record's redelivery. Only a batch whose unfinished records are all on
// their first delivery gives way, so it costs a record one delivery, once,
// and never its last (the caller turns it off when the queue's
// maxReceiveCount leaves fewer than two more).
type GiveWay struct {
	// After is how long a batch runs before it may give way (its drains'
	// first evictions issued); 0 turns giving way off.
	After time.Duration
	// Every is how often the queue is asked after that.
	Every time.Duration
	// Hold is how long the records given back stay away, so the waiting
	// messages are received first; a task's RetryWithin caps it.
	Hold time.Duration
	// Waiting tells how many messages are visible in the queue.
	Waiting func(ctx context.Context, queueARN string) (int, error)
}

func (g GiveWay) on() bool { return g.After > 0 && g.Every > 0 && g.Waiting != nil }

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

func gaveWay(waiting int, after time.Duration) error {
	return fmt.Errorf("%w (%d messages waiting after %s): the nodes stay cordoned and their drains resume on redelivery",
		ErrGaveWay, waiting, after.Round(time.Second))
}

// watch asks, from After on and every Every, whether messages wait in the
// queue while the batch's unfinished tasks (open) are all on their first
// delivery; when some do, it gives way and returns the tasks it gave back.
// run calls it only for a batch that may give way.
// It returns nil when ctx (the batch's wait) ends first.
func (h *Handler) watch(ctx context.Context, queue string, tasks []Task, open func() []int, give context.CancelCauseFunc) []int {
	g := h.opts.GiveWay
	start := time.Now()
	t := time.NewTimer(g.After)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		unfinished := open()
		if len(unfinished) == 0 || !mayGiveWay(tasks, unfinished) {
			return nil // a redelivered record runs to its end: the batch cannot end sooner
		}
		n, err := g.Waiting(ctx, queue)
		switch {
		case err != nil && ctx.Err() == nil:
			h.opts.Log.LogAttrs(ctx, slog.LevelWarn, "cannot tell whether messages wait; not giving way",
				slog.String("queue_arn", queue), slog.Any("error", err))
		case n > 0:
			why := gaveWay(n, time.Since(start))
			h.opts.Log.LogAttrs(ctx, slog.LevelInfo, "batch gives way", slog.Int("waiting", n),
				slog.Int("tasks", len(unfinished)), slog.String("reason", why.Error()))
			give(why)
			return unfinished
		}
		t.Reset(g.Every)
	}
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
