package pipeline

import (
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/hold"
	"github.com/drainpipe/drainpipe/internal/lifecycle"
)

// hook is one lifecycle action of a task with when it was announced and
// the delivery count of the records that carried it.
type hook = lifecycle.Hook

// hooksOf returns the distinct lifecycle actions of a task; the same action
// may arrive in several messages of one batch.
func hooksOf(t handler.Task) []hook {
	var hooks []hook
	seen := map[event.Lifecycle]bool{}
	for _, in := range t.Interruptions {
		if in.Lifecycle == nil {
			continue
		}
		l := *in.Lifecycle
		if l.InstanceID == "" {
			l.InstanceID = t.InstanceID
		}
		if seen[l] {
			continue
		}
		seen[l] = true
		hooks = append(hooks, hook{Lifecycle: l, Time: in.Time, ReceiveCount: t.HookReceiveCount(l)})
	}
	return hooks
}

// primary picks the interruption that drives the drain: the one with the
// earliest known deadline (that is when the instance goes), else the first.
func primary(t handler.Task) event.Interruption {
	var p event.Interruption
	for i, in := range t.Interruptions {
		switch {
		case i == 0:
			p = in
		case !in.Deadline.IsZero() && (p.Deadline.IsZero() || in.Deadline.Before(p.Deadline)):
			p = in
		}
	}
	return p
}

// staleTask applies handler.Stale to a whole task: it is stale when every
// interruption is (none then has work left), with the first one's reason.
func staleTask(t handler.Task, maxAge time.Duration, now time.Time) (string, bool) {
	why := ""
	for _, in := range t.Interruptions {
		w, stale := handler.Stale(in, handler.Delivery{ReceiveCount: t.ReceiveCount, Sent: t.Sent}, maxAge, now)
		if !stale {
			return "", false
		}
		if why == "" {
			why = w
		}
	}
	return why, why != ""
}

// kinds lists the distinct kinds of a task's interruptions for logs.
func kinds(t handler.Task) []string {
	var ks []string
	seen := map[event.Kind]bool{}
	for _, in := range t.Interruptions {
		if !seen[in.Kind] {
			seen[in.Kind] = true
			ks = append(ks, string(in.Kind))
		}
	}
	return ks
}

// holdsOf are the holds a task takes, by the delivery by: one per threat
// it carries (a restore ends holds and a launch action takes none), so a
// batch that brings two threats for one instance leaves the node held
// until both end.
func holdsOf(t handler.Task, by string, now time.Time) []hold.Hold {
	var out []hold.Hold
	for _, in := range t.Interruptions {
		if in.Restore || in.Kind == event.KindASGLaunchLifecycle {
			continue
		}
		out = append(out, hold.Of(in, by, now))
	}
	return out
}

// delivery names one run of a task in the holds it takes: random, as
// two deliveries of one action may run at the same moment in two
// environments.
func delivery() string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}
