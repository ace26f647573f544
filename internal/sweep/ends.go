package sweep

import (
	"context"
	"fmt"
	"time"

	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/hold"
	"github.com/drainpipe/drainpipe/internal/instance"
	"github.com/drainpipe/drainpipe/internal/lifecycle"
)

// spotNotice is how long before its deadline EC2 warns of a Spot or
// Capacity Reservation interruption.
const spotNotice = 2 * time.Minute

// groupTag is the tag Auto Scaling puts on its instances.
const groupTag = "aws:autoscaling:groupName"

// life is how long a terminate lifecycle action can last at most, and
// where that was read.
type life struct {
	d    time.Duration
	from string
}

// orMax is l, or the longest any action lasts when l is unknown.
func (l life) orMax() life {
	if l.d <= 0 {
		return life{d: lifecycle.MaxActionLife, from: "no action outlives it"}
	}
	return l
}

// blockEnd is when a Capacity Block hold's block ends: the end the
// warning gave (drain.AnnotationThreatEnd), else the recorded start of
// terminations plus their lead, else (no deadline either) the cordon plus
// the warning's whole lead.
func blockEnd(hd hold.Hold, deadline, since time.Time) time.Time {
	if end, err := time.Parse(time.RFC3339, hd.End); err == nil {
		return end
	}
	if !deadline.IsZero() {
		return deadline.Add(event.BlockTerminationLead)
	}
	return since.Add(event.BlockTerminationLead + 10*time.Minute)
}

// actionStart is when a terminate lifecycle action began at the earliest
// that still bounds it: the later of the threat's event time and the
// first cordon (either may be missing).
func actionStart(hd hold.Hold, since time.Time) time.Time {
	if at, err := time.Parse(time.RFC3339Nano, hd.Time); err == nil && at.After(since) {
		return at
	}
	return since
}

// actionLife reads how long a terminate lifecycle action of the
// instance's group can last (its hooks' global timeout), once per group
// and sweep (known); lifecycle.MaxActionLife when the group or its hooks
// cannot be read, since no action outlives that.
func (s *Sweeper) actionLife(ctx context.Context, inst instance.Instance, known map[string]life) life {
	group := inst.Tags[groupTag]
	if l, ok := known[group]; ok {
		return l
	}
	l := life{}.orMax()
	switch {
	case group == "":
		l.from += "; instance carries no " + groupTag + " tag"
	case s.d.Hooks == nil:
		l.from += "; hooks not read"
	default:
		// Every terminating hook of the group, not only those Drainpipe
		// answers: another's longer timeout keeps the instance going.
		d, err := s.d.Hooks.ActionLife(ctx, group, nil)
		if err != nil {
			s.d.Log.WarnContext(ctx, "sweep: reading the lifecycle hooks' timeout; bounding the hold by 48 h",
				"group", group, "error", err.Error())
			l.from += fmt.Sprintf("; the hooks of %s unread", group)
			break
		}
		l = life{d: d, from: "global timeout of " + group + "'s terminate hook"}
	}
	known[group] = l
	return l
}
