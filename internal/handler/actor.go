package handler

import (
	"context"
	"time"

	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/policy"
)

// Task is the work for one instance in one SQS batch: one instance is handled
// once per batch, with the strongest action any of its messages asked for.
type Task struct {
	InstanceID string
	// Reservation, set instead of InstanceID, is a Capacity Block whose
	// instances the actor finds (a block expiry names no instance).
	Reservation string
	Action      policy.Action
	// Interruptions are every interruption in the batch naming this
	// instance; every lifecycle hook among them must be completed.
	Interruptions []event.Interruption
	// ReceiveCount is the highest ApproximateReceiveCount among the
	// records behind this task (1 on first delivery).
	ReceiveCount int
	// Sent is the latest SentTimestamp among those records (zero when
	// unknown): a redriven message's is its redrive's (see Stale).
	Sent time.Time
	// HookReceiveCounts is, for each lifecycle action (its InstanceID
	// filled in), the highest ApproximateReceiveCount among the records
	// that carried it: whether a hook is on its last delivery is decided
	// from its own records, not from the task's other ones.
	HookReceiveCounts map[event.Lifecycle]int
	// Copy is set for a task of the cordon queue (Options.CordonQueue):
	// the actor cordons, taints and holds the node and does nothing else.
	Copy bool
}

// Status is how a task ended.
type Status int

// Task statuses. A record's outcome is its worst task's: Retry beats Done
// beats Ignored.
const (
	StatusDone Status = iota
	StatusIgnored
	StatusRetry
)

// Result is a task's outcome with a reason for the log.
type Result struct {
	Status Status
	Reason string
	Node   string // the node acted on, when one was found
	// HoldFor, with StatusRetry, asks for the message back after this long
	// rather than after the retry backoff: the pipeline keeps a rebalance
	// cordon's message in the queue until its hold is over.
	HoldFor time.Duration
	// RetryWithin, with StatusRetry, is the longest the message may stay
	// away (0: no limit): the task left lifecycle hooks pending, and
	// nothing heartbeats them until the next delivery. It caps the retry
	// backoff and HoldFor.
	RetryWithin time.Duration
}

// SoonerWithin is the tighter of two RetryWithin caps; zero is no cap.
func SoonerWithin(a, b time.Duration) time.Duration {
	if a == 0 || (b > 0 && b < a) {
		return b
	}
	return a
}

// Actor carries out tasks. The dry-run actor logs; the pipeline acts.
type Actor interface {
	Act(ctx context.Context, t Task) Result
}

// An Actor may have any of three optional capabilities, which the handler
// uses when it has them (the pipeline has all three, the dry-run actor
// none). New looks for them once; an Actor states the ones it means to
// have with a compile-time assertion (var _ handler.Preparer = ...), so a
// changed signature fails the build instead of silently dropping one.
type (
	// Preparer prepares for a whole batch before its tasks are dispatched
	// (one EC2 call instead of one per instance; hooks held from the start).
	Preparer interface {
		Prepare(ctx context.Context, tasks []Task)
	}
	// LastDeliveryCompleter completes, without acting on the node, the
	// lifecycle hooks of a task's records on their last delivery: the
	// handler calls it when the invocation has no time to act.
	LastDeliveryCompleter interface {
		CompleteLastDelivery(ctx context.Context, t Task) Result
	}
	// Flusher has work still in flight after its tasks returned (webhook
	// messages). Handle calls Flush once every outcome is settled, so the
	// work can delay the answer, within the reserve, but never change it.
	Flusher interface {
		Flush(ctx context.Context)
	}
)

// Sweeper runs the periodic sweep a sweep message asks for: it checks
// every node Drainpipe holds against EC2 and repairs what a lost notice
// left. A batch's sweep messages make one sweep, however many there are;
// it is handed to the Sweeper, never to the Actor.
type Sweeper interface {
	Sweep(ctx context.Context) Result
}
