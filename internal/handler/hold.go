package handler

import (
	"slices"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// heldRecord is a retried message asked back after a hold.
type heldRecord struct {
	msg   events.SQSMessage
	after time.Duration
}

// comeBack tells when a retried record must come back, from its retried
// tasks: hold is the longest hold they asked for, zero when any of them
// wants an ordinary retry, which must not wait; within is the smallest
// Result.RetryWithin they set, zero when none did. Unfinished tasks set
// neither: their actor had no say. A task the batch gave back (gave) holds
// for at least giveWayHold, the messages it gave way to go first, and for
// twice that when its instance has no deadline: the records racing one
// come back, and take the environments freed, first.
func comeBack(r *record, tasks []Task, results []taskResult, gave []int, giveWayHold time.Duration) (hold, within time.Duration) {
	ordinary := false
	for _, i := range r.tasks {
		res := results[i]
		if !res.finished || res.Status != StatusRetry {
			continue
		}
		within = SoonerWithin(within, res.RetryWithin)
		if slices.Contains(gave, i) {
			g := giveWayHold
			if !hasDeadline(tasks[i]) {
				g *= 2
			}
			res.HoldFor = max(res.HoldFor, g)
		}
		if res.HoldFor <= 0 {
			ordinary = true
		}
		hold = max(hold, res.HoldFor)
	}
	if ordinary {
		hold = 0
	}
	return hold, within
}

// hasDeadline reports whether any of t's interruptions says when its
// instance goes (a Spot warning, a scheduled event, a reservation's end).
func hasDeadline(t Task) bool {
	for _, in := range t.Interruptions {
		if !in.Deadline.IsZero() {
			return true
		}
	}
	return false
}
