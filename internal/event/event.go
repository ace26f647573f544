// Package event turns SQS message bodies (EventBridge envelopes, Auto Scaling
// lifecycle notifications, SNS wrappers) into typed interruptions. It does no
// I/O: bytes in, an Interruption or a classified reason out.
package event

import (
	"log/slog"
	"strings"
	"time"
)

// Kind names why an instance is going away.
type Kind string

// The kinds Drainpipe acts on. Their string values are part of the CLI's and
// the logs' output and of the configuration's environment variable values.
const (
	KindSpotInterruption        Kind = "spot-interruption"
	KindRebalanceRecommendation Kind = "rebalance-recommendation"
	KindStateChange             Kind = "state-change"
	KindScheduledChange         Kind = "scheduled-change"
	KindASGLifecycle            Kind = "asg-lifecycle"
	// KindCapacityReservationInterruption is an interruptible Capacity
	// Reservation reclaiming its capacity: the instance is terminated at
	// instance-termination-time (two minutes after the warning).
	KindCapacityReservationInterruption Kind = "capacity-reservation-interruption"
	// KindASGLaunchLifecycle is an Auto Scaling launch lifecycle action: a
	// new instance waits for Drainpipe to see its node Ready. Nothing is
	// cordoned or drained for it, so it has no policy action and is not in
	// Kinds.
	KindASGLaunchLifecycle Kind = "asg-launch-lifecycle"
)

// Lifecycle identifies one Auto Scaling lifecycle action that must be
// heartbeated and completed.
type Lifecycle struct {
	ASG        string `json:"asg"`
	Hook       string `json:"hook"`
	Token      string `json:"token"`
	Transition string `json:"-"`
	InstanceID string `json:"-"`
	// Origin and Destination are where an instance of a group with a warm
	// pool comes from and goes to: EC2, AutoScalingGroup or WarmPool
	// (empty without a warm pool).
	Origin      string `json:"-"`
	Destination string `json:"-"`
}

// WarmPool is Auto Scaling's name for a group's warm pool in a lifecycle
// action's Origin and Destination.
const WarmPool = "WarmPool"

// ToWarmPool reports an action that puts the instance in the group's warm
// pool (launched into it, or scaled in to it): no node serves from it.
func (l Lifecycle) ToWarmPool() bool { return inWarmPool(l.Destination) }

// FromWarmPool reports an action for an instance that is in the warm pool.
func (l Lifecycle) FromWarmPool() bool { return inWarmPool(l.Origin) }

// inWarmPool reads WarmPool, and the Warmed:* lifecycle states some tools
// report in its place.
func inWarmPool(s string) bool { return s == WarmPool || strings.HasPrefix(s, "Warmed") }

// LogValue keeps the action token out of logs: whoever holds it can
// complete the action.
func (l Lifecycle) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("asg", l.ASG),
		slog.String("hook", l.Hook),
		slog.String("instance_id", l.InstanceID),
		slog.String("token", "REDACTED"),
	)
}

// Interruption is one typed notice that instances are going away.
type Interruption struct {
	Kind      Kind
	Instances []string
	// Reservation is the Capacity Block a capacity-block-expiry names
	// instead of instances; the pipeline finds its instances.
	Reservation string
	EventID     string
	Time        time.Time // when AWS emitted the event
	Deadline    time.Time // when the instance goes; zero when unknown
	// End is when the threat is over at the latest: a Capacity Block's
	// end (EC2 terminates its instances before it) or the end of an AWS
	// Health notice's window. Zero when unknown or not given.
	End     time.Time
	Account string
	Region  string
	// State is the EC2 state for state-change events (e.g. "stopping").
	State string
	// Lifecycle is set for KindASGLifecycle and KindASGLaunchLifecycle only.
	Lifecycle *Lifecycle
	// InstanceAction is what EC2 will do to a Spot or Capacity Reservation
	// instance: terminate, stop or hibernate; empty for other kinds.
	InstanceAction string
	// Restore marks a notice that the threat has passed (a state change to
	// pending or running, a Health notice closed): Drainpipe gives back
	// what it took from the node instead of taking more.
	Restore bool
	// CordonOnly, when set, says why this notice warrants at most a cordon
	// whatever the policy (an AWS Health code that only costs the instance its
	// network connectivity for a while).
	CordonOnly string
	// Rule is the EventBridge rule that sent a KindSweep; empty for
	// other kinds.
	Rule string
	// ScheduledCode is EC2's scheduled event code (instance-retirement,
	// instance-stop, instance-reboot, system-reboot, system-maintenance)
	// of a scheduled change, from a Health notice or from
	// DescribeInstanceStatus: with Deadline (its start) it names the
	// event both sources tell of, so it is acted on once.
	ScheduledCode string
	// Skipped names each entity of the notice left out, with why (a
	// malformed instance ID): the notice acts on the others.
	Skipped []string
	// Summary is a short human description of the notice for logs and
	// the CLI (e.g. "spot instance-action terminate").
	Summary string
}
