package handler

import (
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// Retried is a record left to retry, as OnRetry is handed it.
type Retried struct {
	Message events.SQSMessage
	// Within, when positive, is the longest the record may stay away: the
	// smallest Result.RetryWithin of its retried tasks, which left
	// lifecycle hooks pending. The redelivery backoff is cut to it.
	Within time.Duration
}

// capHold cuts a hold to within when that is set and shorter: a pending
// lifecycle hook would expire during a longer hold.
func capHold(after, within time.Duration) time.Duration {
	if within > 0 {
		return min(after, within)
	}
	return after
}
