package preflight

import (
	"fmt"
	"slices"
	"strings"

	"github.com/drainpipe/drainpipe/internal/instance"
)

// Lifecycle transitions, as Auto Scaling names them.
const (
	Terminating = "autoscaling:EC2_INSTANCE_TERMINATING"
	Launching   = "autoscaling:EC2_INSTANCE_LAUNCHING"
)

// ASG is an Auto Scaling group as read from the account.
type ASG struct {
	Name  string
	Tags  map[string]string
	Hooks []Hook
}

// Hook is one lifecycle hook of a group.
type Hook struct {
	Name       string
	Transition string
	// Target is the hook's NotificationTargetARN, empty when Auto Scaling
	// sends its actions to EventBridge only.
	Target        string
	DefaultResult string
}

// HookRow is one lifecycle hook (or a group without one) and whether the
// stack serves it.
type HookRow struct {
	Group      string   `json:"group"`
	Clusters   []string `json:"clusters"` // as the group's tags name them
	Hook       string   `json:"hook"`     // empty for a group row
	Transition string   `json:"transition,omitempty"`
	Target     string   `json:"notificationTarget,omitempty"`
	Status     Status   `json:"status"`
	Verdict    string   `json:"verdict"` // served, not served, left to its owner, no hook
	Reason     string   `json:"reason"`
}

// Verdicts of HookRow.
const (
	Served    = "served"
	NotServed = "not served"
	Owner     = "left to its owner"
	NoHook    = "no hook"
)

// Relevant reports whether a group belongs in the report: its tags name
// one of the stack's clusters, or the stack's rules name it. A group that
// only the single-cluster default would route (no cluster tag at all) is
// left out unless named: the account's other groups are not the cluster's.
func (s Stack) Relevant(g ASG) bool {
	if s.ServesGroup(g.Name) {
		return true
	}
	for _, c := range instance.TaggedClusters(g.Tags) {
		if slices.Contains(s.Clusters, c) {
			return true
		}
	}
	return false
}

// JudgeHooks says, for every terminate and launch hook of the groups, if
// the stack's rules and function serve it, and why not. others are hook
// names the operator says another tool owns (EKS's own, a log shipper's):
// reported as left to their owner, not as gaps.
func JudgeHooks(s Stack, groups []ASG, others []string) ([]HookRow, error) {
	router, err := instance.NewRouter(s.Clusters, s.RequiredTag)
	if err != nil {
		return nil, fmt.Errorf("routing groups to clusters: %w", err)
	}
	rows := []HookRow{}
	for _, g := range groups {
		if !s.Relevant(g) {
			continue
		}
		base := HookRow{Group: g.Name, Clusters: instance.TaggedClusters(g.Tags)}
		if base.Clusters == nil {
			base.Clusters = []string{}
		}
		_, why := router.Cluster(instance.Instance{Tags: g.Tags})
		hasTerminate := false
		for _, h := range g.Hooks {
			if h.Transition != Terminating && h.Transition != Launching {
				continue
			}
			row := base
			row.Hook, row.Transition, row.Target = h.Name, h.Transition, h.Target
			row.Status, row.Verdict, row.Reason = judgeHook(s, g.Name, h, why, others)
			hasTerminate = hasTerminate || h.Transition == Terminating
			rows = append(rows, row)
		}
		if !hasTerminate {
			rows = append(rows, noTerminateHook(s, base))
		}
	}
	return rows, nil
}

// judgeHook decides one hook, the first reason it is not served winning.
func judgeHook(s Stack, group string, h Hook, why instance.Reason, others []string) (Status, string, string) {
	if slices.Contains(others, h.Name) {
		return OK, Owner, "named by --others: another tool answers it"
	}
	if !s.ServesGroup(group) {
		return Gap, NotServed, fmt.Sprintf("group not named by asgNames or asgNamePrefix (%s): no rule matches its "+
			"actions, so each waits out the hook's heartbeat timeout and the node goes undrained", groupSelection(s))
	}
	if !s.servesHook(h.Name) {
		return Gap, NotServed, fmt.Sprintf("hook name not in lifecycleHookNames (%s): the rules skip it; add it "+
			"(-c lifecycleHookNames=%s) or rename the hook, or pass --others %s if another tool answers it",
			strings.Join(s.HookNames, ","), strings.Join(append(slices.Clone(s.HookNames), h.Name), ","), h.Name)
	}
	if why == instance.ReasonForeignCluster {
		return Gap, NotServed, "the group is tagged for another cluster: the function ignores its instances and " +
			"completes their actions without a drain"
	}
	if why != "" {
		// Instances may take tags from the launch template rather than
		// the group: only the instance's own tags settle it.
		return Unknown, NotServed, fmt.Sprintf("the group's tags would make the function ignore its instances (%s), "+
			"unless its launch template tags them", why)
	}
	if h.Target != "" && s.QueueARN == "" {
		return Unknown, Served, "notifies " + h.Target + " too, and the stack's queue is not known (--stack or --queue-arn)"
	}
	if h.Target != "" && h.Target != s.QueueARN {
		return Gap, NotServed, "notifies " + h.Target + ", not the stack's queue: whatever reads it answers the " +
			"action too (aws-node-termination-handler's queue?); remove the hook's notification target once Drainpipe serves it"
	}
	if h.Target != "" {
		return OK, Served, "by the stack's rule and straight to its queue (each action arrives twice; one path is enough)"
	}
	if h.Transition == Launching && h.DefaultResult == "ABANDON" {
		return OK, Served, "by the stack's rule; its default result ABANDON terminates the instance if no answer comes"
	}
	return OK, Served, "by the stack's rule"
}

// noTerminateHook is the row of a group without a terminate hook: a gap
// when the stack names the group (it expects a hook there), else what
// Drainpipe still sees of a scale-in.
func noTerminateHook(s Stack, base HookRow) HookRow {
	base.Verdict = NoHook
	if s.ServesGroup(base.Group) {
		base.Status = Gap
		base.Reason = "named by the stack, but the group has no terminate hook: a scale-in terminates its nodes " +
			"undrained (put-lifecycle-hook --lifecycle-hook-name " + firstOr(s.HookNames, "drainpipe") + ")"
		return base
	}
	base.Status = OK
	base.Reason = "no terminate hook: Drainpipe sees a scale-in only as the instance's state change"
	return base
}

func groupSelection(s Stack) string {
	var parts []string
	if len(s.ASGNames) > 0 {
		parts = append(parts, "asgNames="+strings.Join(s.ASGNames, ","))
	}
	if s.ASGNamePrefix != "" {
		parts = append(parts, "asgNamePrefix="+s.ASGNamePrefix)
	}
	if len(parts) == 0 {
		return "neither is set: the stack has no lifecycle rule"
	}
	return strings.Join(parts, "; ")
}

func firstOr(list []string, def string) string {
	if len(list) > 0 {
		return list[0]
	}
	return def
}
