package event

import (
	"encoding/json"
	"slices"
	"time"
)

// KindInfo is everything the rest of Drainpipe needs to know about one
// kind besides its parser: where its notices come from, how its action is
// configured, what the node's Kubernetes event says, which EventBridge
// rule the stack puts in front of it and how `drainpipe event` writes one.
// The table below is their one source: event dispatch, policy, the
// configuration reference, the stack and the CLI all read it.
type KindInfo struct {
	Kind Kind
	// Source is the only EventBridge source allowed to send DetailTypes:
	// anyone can put an event with any detail-type on a bus, but only AWS
	// can use an aws.* source.
	Source      string
	DetailTypes []string
	// Setting is the DRAINPIPE_ACTION_* variable that sets the kind's
	// action, ContextKey the CDK context key the stack sets it from;
	// both empty for a kind with no policy action (it is not in Kinds).
	Setting, ContextKey string
	// DefaultAction is the action when Setting is unset: none, cordon or
	// cordon-and-drain.
	DefaultAction string
	// SettingDoc says what Setting does, as Markdown, for the
	// configuration reference.
	SettingDoc string
	// Reason is the reason of the Kubernetes event on a node cordoned
	// for the kind.
	Reason string
	// Rule is the EventBridge rule the stack creates for the kind; nil
	// for none of its own.
	Rule *Rule
	// Sample is how `drainpipe event` names and writes the kind; nil for
	// none.
	Sample *Sample
	// parse reads the detail of an EventBridge event of the kind.
	parse func(h header, detail json.RawMessage) (Parsed, error)
}

// Rule is an EventBridge rule matching a kind's notices (Source and
// DetailTypes).
type Rule struct {
	// ID is the rule's construct ID in the stack.
	ID, Description string
	// Detail narrows the match to these values of detail fields; nil:
	// every notice.
	Detail map[string][]string
	// ServedGroups limits the rule to the served Auto Scaling groups'
	// lifecycle actions; the stack creates it only when some are served.
	ServedGroups bool
}

// Sample describes the example event `drainpipe event` writes.
type Sample struct {
	// Name is the CLI's KIND; Usage one line of its help.
	Name, Usage string
	// In is the time left before the instance goes by default; 0: the
	// kind has no deadline.
	In time.Duration
	// build fills the event's detail (nil: the instance's id only).
	build sampleBuild
}

// Actions a kind can default to (policy.Action's names; policy reads
// them from here).
const (
	actionCordon         = "cordon"
	actionCordonAndDrain = "cordon-and-drain"
)

// kindTable lists every kind, in the order of Kinds, the configuration
// reference and the stack's parameters. A new kind is its parser, one row
// here and its fixtures.
var kindTable = []KindInfo{
	{Kind: KindSpotInterruption, Source: "aws.ec2", DetailTypes: []string{detailSpot},
		Setting: "DRAINPIPE_ACTION_SPOT", ContextKey: "actionSpot", DefaultAction: actionCordonAndDrain,
		SettingDoc: "action on a Spot interruption warning: `none`, `cordon` or `cordon-and-drain`",
		Reason:     "SpotInterruption",
		Rule:       &Rule{ID: "SpotInterruptionRule", Description: "Spot interruption warnings (two minutes' notice)"},
		Sample:     &Sample{Name: "spot", Usage: "EC2 Spot Instance Interruption Warning (deadline --in, at most 2m)", In: SpotNotice, build: sampleSpot},
		parse:      parseSpot},
	// Rebalance recommendations come far more often than interruptions,
	// and often come to nothing: only a cordon by default.
	{Kind: KindRebalanceRecommendation, Source: "aws.ec2", DetailTypes: []string{detailRebalance},
		Setting: "DRAINPIPE_ACTION_REBALANCE", ContextKey: "actionRebalance", DefaultAction: actionCordon,
		SettingDoc: "action on a rebalance recommendation (frequent, often without an interruption)",
		Reason:     "RebalanceRecommendation",
		Rule:       &Rule{ID: "RebalanceRule", Description: "Spot rebalance recommendations"},
		Sample:     &Sample{Name: "rebalance", Usage: "EC2 Instance Rebalance Recommendation (no deadline)", build: sampleInstance},
		parse:      parseRebalance},
	{Kind: KindStateChange, Source: "aws.ec2", DetailTypes: []string{detailStateChange},
		Setting: "DRAINPIPE_ACTION_STATE_CHANGE", ContextKey: "actionStateChange", DefaultAction: actionCordonAndDrain,
		SettingDoc: "action when an instance enters `stopping`, `stopped`, `shutting-down` or `terminated`",
		Reason:     "InstanceStateChange",
		Rule: &Rule{ID: "StateChangeRule", Description: "Instances stopping or terminating, and running again (to give their nodes back)",
			Detail: map[string][]string{"state": StateChangeStates()}},
		Sample: &Sample{Name: "state-change", In: ShutdownNotice, build: sampleStateChange,
			Usage: "EC2 Instance State-change Notification (--state; stopping by default, deadline --in, at most 2m)"},
		parse: parseStateChange},
	{Kind: KindScheduledChange, Source: "aws.health", DetailTypes: []string{detailHealth},
		Setting: "DRAINPIPE_ACTION_SCHEDULED_CHANGE", ContextKey: "actionScheduledChange", DefaultAction: actionCordonAndDrain,
		SettingDoc: "action on an AWS Health EC2 scheduled change (every affected instance)",
		Reason:     "ScheduledMaintenance",
		Rule: &Rule{ID: "ScheduledChangeRule", Description: "AWS Health scheduled changes for EC2 (retirement, maintenance)",
			Detail: map[string][]string{"service": {"EC2"}, "eventTypeCategory": {"scheduledChange"}}},
		Sample: &Sample{Name: "health", Usage: "AWS Health scheduled change, instance retirement (deadline --in, 1h by default)", In: time.Hour,
			build: sampleHealth},
		parse: parseHealth},
	{Kind: KindASGLifecycle, Source: "aws.autoscaling", DetailTypes: []string{detailTerminate},
		Setting: "DRAINPIPE_ACTION_ASG_LIFECYCLE", ContextKey: "actionAsgLifecycle", DefaultAction: actionCordonAndDrain,
		SettingDoc: "action on an Auto Scaling terminate lifecycle hook; the hook is completed whatever the action, even `none`",
		Reason:     "LifecycleTermination",
		Rule: &Rule{ID: "ASGLifecycleRule", Description: "Auto Scaling terminate lifecycle actions of the configured groups",
			ServedGroups: true},
		Sample: &Sample{Name: "asg-terminate", Usage: "Auto Scaling terminate lifecycle action (--group, --hook, --token)",
			build: sampleTerminate},
		parse: func(h header, d json.RawMessage) (Parsed, error) {
			return parseLifecycleAction(h, detailTerminate, TransitionTerminating, d)
		}},
	// Terminated two minutes after the warning, like a Spot instance.
	{Kind: KindCapacityReservationInterruption, Source: "aws.ec2", DetailTypes: []string{detailCapacity},
		Setting: "DRAINPIPE_ACTION_CAPACITY_RESERVATION", ContextKey: "actionCapacityReservation", DefaultAction: actionCordonAndDrain,
		SettingDoc: "action on an EC2 Capacity Reservation Instance Interruption Warning (interruptible reservations; terminated at `instance-termination-time`)",
		Reason:     "CapacityReservationInterruption",
		Rule:       &Rule{ID: "CapacityReservationRule", Description: "Interruptible Capacity Reservation interruption warnings (two minutes' notice)"},
		Sample: &Sample{Name: "capacity-reservation", Usage: "EC2 Capacity Reservation Instance Interruption Warning (deadline --in)", In: SpotNotice,
			build: sampleCapacity},
		parse: parseCapacityInterruption},
	// EC2 terminates a Capacity Block's instances before it ends. AWS's
	// documentation spells the detail-type both ways; the warning names
	// the reservation, whose instances the handler lists.
	{Kind: KindCapacityBlockExpiry, Source: "aws.ec2", DetailTypes: []string{detailBlockExpiry, detailBlockExpiryAlt},
		Setting: "DRAINPIPE_ACTION_CAPACITY_BLOCK", ContextKey: "actionCapacityBlock", DefaultAction: actionCordonAndDrain,
		SettingDoc: "action on a Capacity Block Expiration Warning, for every instance EC2 lists in the block (`DescribeInstances` by `capacity-reservation-id`)",
		Reason:     "CapacityBlockExpiry",
		Rule:       &Rule{ID: "CapacityBlockRule", Description: "Capacity Block expiration warnings (40 minutes before the block ends)"},
		Sample: &Sample{Name: "capacity-block", In: blockNotice, build: sampleBlockExpiry,
			Usage: "Capacity Block Expiration Warning (--reservation; terminations begin --in, 10m by default)"},
		parse: parseBlockExpiry},
	// A launch hook left to time out ends in ABANDON by default, which
	// terminates the new instance: the function completes it.
	{Kind: KindASGLaunchLifecycle, Source: "aws.autoscaling", DetailTypes: []string{detailLaunch},
		Rule: &Rule{ID: "ASGLaunchLifecycleRule", Description: "Auto Scaling launch lifecycle actions of the configured groups",
			ServedGroups: true},
		Sample: &Sample{Name: "asg-launch", Usage: "Auto Scaling launch lifecycle action (--group, --hook, --token)",
			build: sampleLaunch},
		parse: func(h header, d json.RawMessage) (Parsed, error) {
			return parseLifecycleAction(h, detailLaunch, TransitionLaunching, d)
		}},
	// The stack's schedule rule is the sweep's own (see the stack's sweep).
	{Kind: KindSweep, Source: "aws.events", DetailTypes: []string{detailScheduled},
		parse: func(h header, _ json.RawMessage) (Parsed, error) { return parseScheduled(h) }},
}

// Table returns every kind's row, in a stable order; the caller may
// change the copy.
func Table() []KindInfo { return slices.Clone(kindTable) }

// Info returns kind k's row.
func Info(k Kind) (KindInfo, bool) {
	i := slices.IndexFunc(kindTable, func(r KindInfo) bool { return r.Kind == k })
	if i < 0 {
		return KindInfo{}, false
	}
	return kindTable[i], true
}

// Kinds lists every kind with a policy action, in a stable order.
func Kinds() []Kind {
	var out []Kind
	for _, r := range kindTable {
		if r.Setting != "" {
			out = append(out, r.Kind)
		}
	}
	return out
}

// byDetailType finds the row of an EventBridge detail-type.
func byDetailType(detailType string) (KindInfo, bool) {
	for _, r := range kindTable {
		if slices.Contains(r.DetailTypes, detailType) {
			return r, true
		}
	}
	return KindInfo{}, false
}
