package hold

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/drainpipe/drainpipe/internal/event"
)

// Ends says which holds a give-back ends. Every condition set must hold;
// the zero Ends ends every hold (an operator's `drainpipe uncordon`).
type Ends struct {
	// Kinds, when set, are the kinds of threat the give-back is for.
	Kinds []string
	// ID, when set, must equal the hold's ID.
	ID string
	// Keys, when set, are the exact holds to end (the sweep's verdicts).
	Keys []Key
	// Before, when set, is the event time of the restore asking: a hold
	// whose threat was announced at or after it stays (the restore was
	// overtaken on its way: SQS and EventBridge do not keep order).
	Before time.Time
	// By, when set, must equal the hold's By: a delivery that finds its
	// action over ends only the hold it took itself, never one an
	// earlier delivery of the same action took and acted on.
	By string
}

// Split returns the holds e ends and those that stay, with why each that
// matched all else but was overtaken stays (empty when none).
func (s Set) Split(e Ends) (ended, kept Set, overtaken string) {
	var why []string
	for _, h := range s {
		switch {
		case !e.matches(h):
			kept = append(kept, h)
		case !e.Before.IsZero() && !parse(h.Time).IsZero() && !e.Before.After(parse(h.Time)):
			kept = append(kept, h)
			why = append(why, fmt.Sprintf("the restore's event time %s is not after that of the %s threat (%s)",
				Precise(e.Before), h.Key(), h.Time))
		default:
			ended = append(ended, h)
		}
	}
	return ended, kept, strings.Join(why, "; ")
}

func (e Ends) matches(h Hold) bool {
	return (len(e.Kinds) == 0 || slices.Contains(e.Kinds, h.Kind)) && (e.ID == "" || e.ID == h.ID) &&
		(len(e.Keys) == 0 || slices.Contains(e.Keys, h.Key())) && (e.By == "" || e.By == h.By)
}

// Legacy is the set of one that the single-hold marks of earlier releases
// (drainpipe.dev/kind, event-id, threat-time, deadline, threat-end,
// first-seen) describe; empty when kind is.
func Legacy(kind, id, threatTime, deadline, end, since string) Set {
	if kind == "" {
		return nil
	}
	if threatTime == "" {
		// Releases before the threat time compared a restore with the
		// first cordon, which came after the threat's event.
		threatTime = since
	}
	return Set{{Kind: kind, ID: id, Time: threatTime, Deadline: deadline, End: end, Since: since}}
}

// Of is the hold a threat's notice takes, by the delivery by.
func Of(in event.Interruption, by string, now time.Time) Hold {
	h := Hold{Kind: string(in.Kind), ID: in.EventID, Since: Stamp(now), By: by}
	if in.Lifecycle != nil {
		h.ID = in.Lifecycle.Token
	}
	if !in.Time.IsZero() {
		h.Time = Precise(in.Time)
	}
	if !in.Deadline.IsZero() {
		h.Deadline = Stamp(in.Deadline)
	}
	if !in.End.IsZero() {
		h.End = Stamp(in.End)
	}
	return h
}
