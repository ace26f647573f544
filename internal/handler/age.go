package handler

import (
	"fmt"
	"time"

	"github.com/drainpipe/drainpipe/internal/event"
)

// Stale is the one rule for aging interruptions out (DRAINPIPE_MAX_EVENT_AGE):
// on its first delivery an interruption more than maxAge past its deadline,
// or its time when it has none, is too old to act on, so a backlog does not
// drain nodes long since replaced. A redelivery (receive count above 1)
// resumes work already started, such as a drain a PDB blocks, and is never
// aged out: acknowledging it would leave the node cordoned and skip the
// dead-letter queue. A restore never ages out: it only gives back what
// Drainpipe took, and is checked against EC2's answer, so dropping a late
// one would leave the node held for good. maxAge 0 means no limit. The
// reason names the field compared.
func Stale(in event.Interruption, receiveCount int, maxAge time.Duration, now time.Time) (string, bool) {
	if maxAge <= 0 || receiveCount > 1 || in.Restore {
		return "", false
	}
	field, ref := "time", in.Time
	if !in.Deadline.IsZero() {
		field, ref = "deadline", in.Deadline
	}
	age := now.Sub(ref)
	if ref.IsZero() || age <= maxAge {
		return "", false
	}
	return fmt.Sprintf("stale: event is %s past its %s %s on its first delivery (max event age %s)",
		age.Round(time.Second), field, ref.UTC().Format(time.RFC3339), maxAge), true
}
