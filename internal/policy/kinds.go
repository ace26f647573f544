package policy

import (
	"fmt"

	"github.com/drainpipe/drainpipe/internal/event"
)

// Policy maps each kind of interruption to its action. Auto Scaling
// terminate hooks are always completed, whatever their action.
type Policy map[event.Kind]Action

// Default is the policy when nothing is configured: drain whenever the
// instance is surely going, only cordon on a rebalance recommendation
// (they come far more often than interruptions, and often come to nothing).
func Default() Policy {
	return Policy{
		event.KindSpotInterruption:        ActionCordonAndDrain,
		event.KindRebalanceRecommendation: ActionCordon,
		event.KindStateChange:             ActionCordonAndDrain,
		event.KindScheduledChange:         ActionCordonAndDrain,
		event.KindASGLifecycle:            ActionCordonAndDrain,
		// Terminated two minutes after the warning, like a Spot instance.
		event.KindCapacityReservationInterruption: ActionCordonAndDrain,
		// EC2 terminates a Capacity Block's instances before it ends.
		event.KindCapacityBlockExpiry: ActionCordonAndDrain,
	}
}

// For returns the action for kind k; none for a kind the policy lacks.
func (p Policy) For(k event.Kind) Action {
	if a, ok := p[k]; ok && a.Valid() {
		return a
	}
	return ActionNone
}

// Var names the environment variable that sets the action for kind k.
func Var(k event.Kind) string {
	switch k {
	case event.KindSpotInterruption:
		return "DRAINPIPE_ACTION_SPOT"
	case event.KindRebalanceRecommendation:
		return "DRAINPIPE_ACTION_REBALANCE"
	case event.KindStateChange:
		return "DRAINPIPE_ACTION_STATE_CHANGE"
	case event.KindScheduledChange:
		return "DRAINPIPE_ACTION_SCHEDULED_CHANGE"
	case event.KindASGLifecycle:
		return "DRAINPIPE_ACTION_ASG_LIFECYCLE"
	case event.KindCapacityReservationInterruption:
		return "DRAINPIPE_ACTION_CAPACITY_RESERVATION"
	case event.KindCapacityBlockExpiry:
		return "DRAINPIPE_ACTION_CAPACITY_BLOCK"
	default:
		return ""
	}
}

// IgnoreReason explains why an interruption of kind k is not acted on when
// its action is none.
func IgnoreReason(k event.Kind) string {
	return fmt.Sprintf("policy: %s is none (%s)", k, Var(k))
}
