// Package handler turns one SQS batch into actions: it parses every record,
// groups the interruptions by instance into tasks, runs the tasks through
// an Actor with bounded concurrency and reports which records to retry.
package handler

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/policy"
)

// DefaultConcurrency is how many tasks run at once when Options leaves it
// unset.
const DefaultConcurrency = 10

// Options configure a Handler.
type Options struct {
	Policy policy.Policy
	Actor  Actor
	Log    *slog.Logger
	// Concurrency caps the tasks running at once.
	Concurrency int
	// MaxEventAge is how long after its deadline (or its time, when it has
	// none) an interruption is still acted on; 0 means forever. Lifecycle
	// hooks are always handed to the actor so they get completed.
	MaxEventAge time.Duration
	// DeadlineReserve is kept back from the context's deadline: tasks must
	// end by then, and the batch is reported at half of it at the latest.
	DeadlineReserve time.Duration
	// Now is the clock for event age; time.Now when nil.
	Now func() time.Time
	// OnRecord, when set, observes every record once its outcome is
	// settled (metrics). It runs before Handle returns and must be quick.
	OnRecord func(ctx context.Context, s RecordSummary)
	// OnRetry, when set, is handed the batch's records left to retry, once
	// per batch before Handle returns, to hasten their redelivery, each
	// with how soon it must come back (Retried.Within). Its context ends a
	// quarter of DeadlineReserve before the invocation's deadline, keeping
	// the rest to answer; it cannot change the response.
	OnRetry func(ctx context.Context, retried []Retried)
	// Accept lists the message shapes handled (DRAINPIPE_ACCEPT); others
	// are rejected. Empty accepts every shape.
	Accept event.Shapes
	// Topics are the SNS topics the queue subscribes to
	// (DRAINPIPE_SNS_TOPICS): an SNS notification through any other is
	// rejected. Empty checks only that a topic is of the function's
	// account.
	Topics []string
	// OnHold, when set, is handed each retried record whose tasks asked to
	// come back later (Result.HoldFor, the longest of them, cut to the
	// smallest Result.RetryWithin) instead of passing it to OnRetry; same
	// context as OnRetry.
	OnHold func(ctx context.Context, held events.SQSMessage, after time.Duration)
	// GiveWay, when on, lets a batch hand its records back while other
	// messages wait in its queue.
	GiveWay GiveWay
	// SweepRule is the ARN (or name) of the schedule rule whose Scheduled
	// Events are sweeps (DRAINPIPE_SWEEP_RULE); scheduled events from other
	// rules are ignored with a reason. Empty: no sweep.
	SweepRule string
	// Sweeper runs the sweeps; nil ignores sweep messages with a reason.
	Sweeper Sweeper
	// CordonQueue is the ARN of the cordon queue
	// (DRAINPIPE_CORDON_QUEUE_ARN): its batches are cordon copies
	// (cordoncopy.go). Empty: none.
	CordonQueue string
}

// Handler handles SQS batches. It is safe for concurrent use.
type Handler struct {
	opts Options
	// The Actor's optional capabilities (see Preparer); nil without.
	preparer  Preparer
	completer LastDeliveryCompleter
	flusher   Flusher
}

// New returns a Handler.
func New(o Options) *Handler {
	if o.Concurrency < 1 {
		o.Concurrency = DefaultConcurrency
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Policy == nil {
		o.Policy = policy.Default()
	}
	h := &Handler{opts: o}
	h.preparer, _ = o.Actor.(Preparer)
	h.completer, _ = o.Actor.(LastDeliveryCompleter)
	h.flusher, _ = o.Actor.(Flusher)
	return h
}

// Handle processes one batch. Every record ends done, ignored, rejected or
// retry, and only retry records are reported as failures, so SQS deletes
// the rest. It never returns an error: that would retry the whole batch.
func (h *Handler) Handle(ctx context.Context, batch events.SQSEvent) (events.SQSEventResponse, error) {
	start := time.Now()
	p := h.plan(batch.Records, originOf(ctx))
	queue := queueOf(batch.Records)
	copies := h.isCopyBatch(queue)
	if copies {
		markCopies(p.tasks)
		queue = "" // a copy batch is quick and never gives way
	}
	results, gave, way := h.run(ctx, p.tasks, queue)

	// An empty list, not null: the documented shape for "whole batch done".
	resp := events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}
	counts := map[outcome]int{}
	var retried []Retried
	var held []heldRecord
	for i, r := range p.records {
		r.settle(p.tasks, results, start)
		if copies {
			r.acknowledge()
		}
		counts[r.outcome]++
		if r.outcome == outcomeRetry {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.messageID})
			after, within := comeBack(r, p.tasks, results, gave, h.opts.GiveWay.Hold)
			if after > 0 && h.opts.OnHold != nil {
				held = append(held, heldRecord{batch.Records[i], capHold(after, within)})
			} else {
				retried = append(retried, Retried{Message: batch.Records[i], Within: within}) // records[i] is Records[i]
			}
		}
		r.log(ctx, h.opts.Log)
		if h.opts.OnRecord != nil {
			h.opts.OnRecord(ctx, r.summary(start))
		}
	}
	if (len(retried) > 0 && h.opts.OnRetry != nil) || len(held) > 0 {
		h.retry(ctx, retried, held)
	}
	if h.flusher != nil {
		h.flush(ctx, h.flusher)
	}
	attrs := []slog.Attr{slog.Int("records", len(p.records)),
		slog.Int("tasks", len(p.tasks)),
		slog.Int("done", counts[outcomeDone]),
		slog.Int("ignored", counts[outcomeIgnored]),
		slog.Int("rejected", counts[outcomeRejected]),
		slog.Int("retry", counts[outcomeRetry]),
		slog.Float64("duration_ms", ms(time.Since(start)))}
	if way != "" {
		attrs = append(attrs, slog.String("give_way", way))
	}
	h.opts.Log.LogAttrs(ctx, slog.LevelInfo, "batch handled", attrs...)
	return resp, nil
}

// retry calls OnRetry within the reserve, turning a panic into a log line:
// hastening redelivery must never cost the batch its answer.
func (h *Handler) retry(ctx context.Context, msgs []Retried, held []heldRecord) {
	ctx, cancel := h.beforeAnswer(ctx)
	defer cancel()
	defer func() {
		if p := recover(); p != nil {
			h.opts.Log.ErrorContext(ctx, "retry hook panicked", "panic", fmt.Sprint(p))
		}
	}()
	for _, r := range held {
		h.opts.OnHold(ctx, r.msg, r.after)
	}
	if len(msgs) > 0 && h.opts.OnRetry != nil {
		h.opts.OnRetry(ctx, msgs)
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
