// Package preflight decides, from what `drainpipe check` read in an
// account and its clusters, whether a deployment has gaps: lifecycle hooks
// the stack's rules will not serve, clusters without the access entry, the
// RBAC or the flow control Drainpipe needs, an alarm topic nobody reads.
// It holds only the decisions, with no I/O, so each one is tested on plain
// values; the command gathers the facts and prints the report.
package preflight

import (
	"slices"
	"strings"
)

// Status is a check's result.
type Status string

// Statuses. Unknown is a check that could not be made (a call denied, a
// value not given): it is reported with its reason, never taken as ok.
const (
	OK      Status = "ok"
	Gap     Status = "gap"
	Unknown Status = "unknown"
)

// Group is the Kubernetes group the function's role is mapped to and that
// deploy/rbac.yaml and deploy/flowcontrol.yaml name.
const Group = "drainpipe"

// Stack is what a deployment serves: the function's configuration
// (DRAINPIPE_CLUSTERS, DRAINPIPE_ASG_NAMES, DRAINPIPE_ASG_NAME_PREFIX,
// DRAINPIPE_LIFECYCLE_HOOK_NAMES, DRAINPIPE_REQUIRED_TAG) and the stack's
// outputs. An empty ARN is one not known.
type Stack struct {
	Clusters      []string `json:"clusters"`
	ASGNames      []string `json:"asgNames,omitempty"`
	ASGNamePrefix string   `json:"asgNamePrefix,omitempty"`
	// HookNames are the hooks Drainpipe owns; empty serves every hook
	// (the function's reading of an unset DRAINPIPE_LIFECYCLE_HOOK_NAMES).
	HookNames   []string `json:"lifecycleHookNames,omitempty"`
	RequiredTag string   `json:"requiredTag,omitempty"`
	QueueARN    string   `json:"queueArn,omitempty"`
	RoleARN     string   `json:"roleArn,omitempty"`
	TopicARN    string   `json:"alarmTopicArn,omitempty"`
	// Version is the deployed function's (the stack's drainpipe:version
	// tag); empty when not read from a stack.
	Version string `json:"version,omitempty"`
}

// ServesGroup reports whether the stack's lifecycle rules match a group,
// as its rules' AutoScalingGroupName pattern and the function do.
func (s Stack) ServesGroup(name string) bool {
	return slices.Contains(s.ASGNames, name) || (s.ASGNamePrefix != "" && strings.HasPrefix(name, s.ASGNamePrefix))
}

// servesHook reports whether a hook name is one the stack's rules match.
func (s Stack) servesHook(name string) bool {
	return len(s.HookNames) == 0 || slices.Contains(s.HookNames, name)
}

// Check is one finding of the report.
type Check struct {
	Cluster string `json:"cluster,omitempty"` // empty for the stack's own checks
	What    string `json:"what"`              // "access entry", "rbac", "flowcontrol", "alarm topic"
	Status  Status `json:"status"`
	Detail  string `json:"detail"`
	// Missing lists what a gap lacks (permissions, objects), for scripts.
	Missing []string `json:"missing,omitempty"`
}

// Report is everything `drainpipe check` found.
type Report struct {
	Stack  Stack     `json:"stack"`
	Source string    `json:"source"` // where Stack came from
	Hooks  []HookRow `json:"hooks"`
	Checks []Check   `json:"checks"`
}

// Counts returns how many findings are gaps and how many unknown.
func (r Report) Counts() (gaps, unknown int) {
	count := func(s Status) {
		switch s {
		case Gap:
			gaps++
		case Unknown:
			unknown++
		}
	}
	for _, h := range r.Hooks {
		count(h.Status)
	}
	for _, c := range r.Checks {
		count(c.Status)
	}
	return gaps, unknown
}
