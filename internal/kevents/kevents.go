// Package kevents records what Drainpipe does as Kubernetes events, so
// `kubectl describe node` (and `describe pod`) shows it: one event on the
// node once it is cordoned (reason by interruption kind, with
// the deadline), one when it ends in a notable state (Drained,
// DrainBlocked, DrainUnfinished), and one per evicted or blocked pod.
//
// Events are core/v1 Events, the kind `kubectl describe` lists: node
// events live in the default namespace with the node's name as UID, as
// the kubelet writes them. Their names are derived from the reason, the
// interruption's event id and the object, so a redelivered message
// refreshes the same event instead of adding one.
//
// Writing an event never fails or slows a drain: writes run in the
// background with their own timeout, and Run waits for them at most
// Options.Flush after the drain.
package kevents

import (
	"time"

	"github.com/drainpipe/drainpipe/internal/event"
)

// Reasons of the events written. A node cordoned for an interruption gets
// its kind's reason from the kinds table (event.KindInfo.Reason).
const (
	ReasonInterruption      = "Interruption" // a kind the table does not know
	ReasonDrained           = "Drained"
	ReasonDrainBlocked      = "DrainBlocked"
	ReasonDrainUnfinished   = "DrainUnfinished"
	ReasonEvictionRefused   = "EvictionRefused"
	ReasonDeletedAtDeadline = "DeletedAtDeadline"
)

// Reason is the event reason for an interruption kind.
func Reason(kind string) string {
	if r, ok := event.Info(event.Kind(kind)); ok && r.Reason != "" {
		return r.Reason
	}
	return ReasonInterruption
}

// Defaults for zero Options fields.
const (
	DefaultComponent    = "drainpipe"
	DefaultTimeout      = 2 * time.Second
	DefaultFlush        = 2 * time.Second
	DefaultWorkers      = 4
	DefaultMaxPodEvents = 500
	// nodeEventNamespace is where node events go (the node is cluster-scoped).
	nodeEventNamespace = "default"
	maxMessage         = 1024 // the events API's limit on notes
)
