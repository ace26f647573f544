package pipeline

import (
	"time"

	"github.com/drainpipe/drainpipe/internal/handler"
)

// beforeDeadline caps a retry's delay at a third of the time left before
// the task's nearest deadline still ahead (whole seconds, at least one):
// the backoff grows with each failed delivery, and without the cap a Spot
// warning retried through a short outage came back after its two minutes,
// when only a cordon is left to do. A third leaves room for two more
// tries; a tighter cap (a pending hook's) stays.
func beforeDeadline(t handler.Task, r handler.Result, now time.Time) handler.Result {
	if r.Status != handler.StatusRetry {
		return r
	}
	var nearest time.Time
	for _, in := range t.Interruptions {
		if in.Deadline.After(now) && (nearest.IsZero() || in.Deadline.Before(nearest)) {
			nearest = in.Deadline
		}
	}
	if nearest.IsZero() {
		return r
	}
	r.RetryWithin = handler.SoonerWithin(r.RetryWithin, max((nearest.Sub(now)/3).Truncate(time.Second), time.Second))
	return r
}
