package handler

import (
	"fmt"
	"time"

	"github.com/drainpipe/drainpipe/internal/event"
)

// Delivery is what SQS says of a record's delivery.
type Delivery struct {
	// ReceiveCount is ApproximateReceiveCount (1 on a first delivery).
	ReceiveCount int
	// Sent is SentTimestamp: when the message entered the queue (zero when
	// unknown). A message redriven from the dead-letter queue, by SQS's
	// move task or by a resend, carries the redrive's time.
	Sent time.Time
}

// Stale is the one rule for aging interruptions out (DRAINPIPE_MAX_EVENT_AGE),
// so a backlog does not drain nodes long since replaced. It applies to a
// first delivery only: a redelivery (receive count above 1) resumes work
// already started, such as a drain a PDB blocks, and acknowledging it would
// leave the node cordoned and skip the dead-letter queue. A restore never
// ages out: it only gives back what Drainpipe took, and is checked against
// EC2's answer, so dropping a late one would leave the node held for good.
// maxAge 0 means no limit.
//
// What is old is the threat, not the message: an interruption with a
// deadline is stale more than maxAge past it, however it reached the
// queue (the instance is gone). One without a deadline (a rebalance
// recommendation, a stopped instance) is stale more than maxAge past its
// time, unless the message entered the queue when the event was already
// that old: only a redrive from the dead-letter queue (SQS's move task or
// a resend: both send anew) or a hand-sent replay does that, and such a
// message is judged from its sent time, so an operator's redrive is acted
// on while a backlog the function never read ages out. The reason names
// the field compared.
func Stale(in event.Interruption, d Delivery, maxAge time.Duration, now time.Time) (string, bool) {
	if maxAge <= 0 || d.ReceiveCount > 1 || in.Restore {
		return "", false
	}
	field, ref := "time", in.Time
	switch {
	case !in.Deadline.IsZero():
		field, ref = "deadline", in.Deadline
	case d.Sent.Sub(in.Time) > maxAge:
		field, ref = "sent time", d.Sent
	}
	age := now.Sub(ref)
	if ref.IsZero() || age <= maxAge {
		return "", false
	}
	return fmt.Sprintf("stale: event is %s past its %s %s on its first delivery (max event age %s)",
		age.Round(time.Second), field, ref.UTC().Format(time.RFC3339), maxAge), true
}
