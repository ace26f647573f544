package main

import (
	"fmt"
	"strings"
)

// nthAccountKey is a context key NTH's values cannot fill: what NTH's
// queue mode serves without configuration, but Drainpipe's stack only
// for what it is told.
type nthAccountKey struct {
	Context []string `json:"context"`
	Why     string   `json:"why"`
	Find    string   `json:"find"`
}

// nthNotInValues lists the lifecycle-hook context: NTH handles every
// lifecycle action reaching its queue, whatever the group or hook name,
// while the stack creates its lifecycle rules and Auto Scaling permissions
// only for the groups named, and the function serves only the hooks named.
// Left unset, a migration silently stops draining on scale-in.
func nthNotInValues() []nthAccountKey {
	return []nthAccountKey{
		{
			Context: []string{"asgNames", "asgNamePrefix"},
			Why: "NTH serves the lifecycle actions of every Auto Scaling group that reaches its queue; Drainpipe's " +
				"lifecycle rules and autoscaling:CompleteLifecycleAction/RecordLifecycleActionHeartbeat permissions " +
				"exist only for the groups named here (or matching the prefix). Without either, no lifecycle hook is served",
			Find: "aws autoscaling describe-auto-scaling-groups --query 'AutoScalingGroups[].AutoScalingGroupName' --output text",
		},
		{
			Context: []string{"lifecycleHookNames"},
			Why: "Drainpipe serves only the hooks named here (default drainpipe,drainpipe-launch); NTH's hooks " +
				"have their own names (my-k8s-term-hook in NTH's docs). List every terminate and launch hook NTH answers",
			Find: "aws autoscaling describe-lifecycle-hooks --auto-scaling-group-name GROUP " +
				"--query 'LifecycleHooks[].[LifecycleHookName,LifecycleTransition,NotificationTargetARN]' --output text",
		},
		{
			Context: []string{"env"},
			Why: "Is Karpenter's interruption queue on (its settings.interruptionQueue)? Karpenter then handles the " +
				"same notices for the nodes it launched, and replaces them; Drainpipe acts on every instance of the " +
				"clusters it serves, whatever launched it. To leave Karpenter's nodes to it, set " +
				"DRAINPIPE_KARPENTER_NODES=skip in env (docs/policy.md#karpenter)",
			Find: "helm get values karpenter -n kube-system -a -o yaml | grep -i interruptionQueue",
		},
	}
}

// noteNotInValues tells the reader, beside the JSON, which context keys
// they must still set themselves.
func noteNotInValues(keys []nthAccountKey) string {
	var names []string
	for _, k := range keys {
		names = append(names, strings.Join(k.Context, " or "))
	}
	return fmt.Sprintf("drainpipe nth-values: the values file cannot say which Auto Scaling groups' lifecycle hooks NTH "+
		"serves, nor their names: set context %s yourself (see notInValues and docs/migrating-from-nth.md)",
		strings.Join(names, ", and "))
}
