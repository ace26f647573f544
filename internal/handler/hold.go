package handler

import (
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// heldRecord is a retried message asked back after a hold.
type heldRecord struct {
	msg   events.SQSMessage
	after time.Duration
}

// holdFor is the longest hold a retried record's retried tasks asked for;
// zero when any of them wants an ordinary retry, which must not wait.
func holdFor(r *record, results []taskResult) time.Duration {
	var longest time.Duration
	for _, i := range r.tasks {
		res := results[i]
		if !res.finished || res.Status != StatusRetry {
			continue
		}
		if res.HoldFor <= 0 {
			return 0
		}
		longest = max(longest, res.HoldFor)
	}
	return longest
}
