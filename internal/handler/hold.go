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
// for at least giveWayHold: the messages it gave way to go first.
func comeBack(r *record, results []taskResult, gave []int, giveWayHold time.Duration) (hold, within time.Duration) {
	ordinary := false
	for _, i := range r.tasks {
		res := results[i]
		if !res.finished || res.Status != StatusRetry {
			continue
		}
		within = SoonerWithin(within, res.RetryWithin)
		if slices.Contains(gave, i) {
			res.HoldFor = max(res.HoldFor, giveWayHold)
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
