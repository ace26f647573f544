package pipeline

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/instance"
)

// GroupTag is the tag Auto Scaling puts on the instances of a group.
const GroupTag = "aws:autoscaling:groupName"

// servesGroups reports whether the served groups are restricted.
func (a *Actor) servesGroups() bool { return a.cfg.Rules().servesGroups() }

// servedHooks splits hooks into those Drainpipe serves and those it leaves
// alone (Rules.foreign), logging each of these.
func (a *Actor) servedHooks(hooks []hook, log *slog.Logger) (served []hook) {
	rules := a.cfg.Rules()
	for _, h := range hooks {
		switch why, ofGroup := rules.foreign(h.ASG, h.Hook); {
		case why == "":
			served = append(served, h)
		case ofGroup:
			log.Warn("lifecycle hook of a group Drainpipe does not serve; left alone", "asg", h.ASG, "hook", h.Hook)
		default:
			log.Info("lifecycle hook owned by another tool; left alone", "asg", h.ASG, "hook", h.Hook)
		}
	}
	return served
}

// nothingToDo reports, with why, a task of lifecycle hooks only whose
// every hook answered its first heartbeat with "No active Lifecycle
// Action" (the action is over: completed by an earlier delivery, or timed
// out). Hooks Drainpipe leaves alone are Decide's.
func (a *Actor) nothingToDo(t handler.Task, hooks []hook) (string, bool) {
	if onlyHooks(t) && a.keeper.Inactive(hooks) {
		return whyNotPending, true
	}
	return "", false
}

// checkGroupTag drops the hooks whose group is not the instance's own (its
// aws:autoscaling:groupName tag) when the served groups are restricted,
// and reports a task left with nothing to act on.
func (a *Actor) checkGroupTag(t handler.Task, inst instance.Instance, hooks *[]hook, log *slog.Logger) (string, bool) {
	if !a.servesGroups() || len(*hooks) == 0 {
		return "", false
	}
	group := inst.Tags[GroupTag]
	var kept []hook
	var wrong []string
	for _, h := range *hooks {
		if h.ASG == group {
			kept = append(kept, h)
			continue
		}
		log.Warn("lifecycle hook names a group the instance is not in; left alone", "asg", h.ASG, "hook", h.Hook,
			"instance_group", group)
		wrong = append(wrong, h.ASG)
	}
	*hooks = kept
	if len(kept) == 0 && onlyHooks(t) {
		return fmt.Sprintf("lifecycle hook of group %s, but the instance's %s tag is %q", strings.Join(wrong, ", "),
			GroupTag, group), true
	}
	return "", false
}

// onlyHooks reports whether every interruption of t is a lifecycle hook.
func onlyHooks(t handler.Task) bool {
	for _, in := range t.Interruptions {
		if in.Lifecycle == nil {
			return false
		}
	}
	return len(t.Interruptions) > 0
}
