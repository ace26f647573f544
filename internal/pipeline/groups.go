package pipeline

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/instance"
)

// GroupTag is the tag Auto Scaling puts on the instances of a group.
const GroupTag = "aws:autoscaling:groupName"

// servesGroups reports whether the served groups are restricted (the
// stack always restricts them; local runs may not).
func (a *Actor) servesGroups() bool {
	return len(a.cfg.ASGNames) > 0 || a.cfg.ASGNamePrefix != ""
}

// serves reports whether asg is a group Drainpipe serves.
func (a *Actor) serves(asg string) bool {
	if !a.servesGroups() {
		return true
	}
	return slices.Contains(a.cfg.ASGNames, asg) || (a.cfg.ASGNamePrefix != "" && strings.HasPrefix(asg, a.cfg.ASGNamePrefix))
}

// servedHooks splits hooks into those Drainpipe serves and why it leaves
// the others alone: hooks of groups not served (forged or misrouted
// messages: never heartbeated nor completed, since that would let another
// group's instance go) and hooks another tool owns (Config.HookNames).
func (a *Actor) servedHooks(hooks []hook, log *slog.Logger) (served []hook, foreign []string) {
	for _, h := range hooks {
		switch {
		case !a.serves(h.ASG):
			log.Warn("lifecycle hook of a group Drainpipe does not serve; left alone", "asg", h.ASG, "hook", h.Hook)
			foreign = append(foreign, fmt.Sprintf("lifecycle hook of group %s, which Drainpipe does not serve "+
				"(DRAINPIPE_ASG_NAMES, DRAINPIPE_ASG_NAME_PREFIX)", h.ASG))
		case len(a.cfg.HookNames) > 0 && !slices.Contains(a.cfg.HookNames, h.Hook):
			log.Info("lifecycle hook owned by another tool; left alone", "asg", h.ASG, "hook", h.Hook)
			foreign = append(foreign, fmt.Sprintf("lifecycle hook %s of group %s is not one Drainpipe serves "+
				"(DRAINPIPE_LIFECYCLE_HOOK_NAMES=%s): left to its owner", h.Hook, h.ASG, strings.Join(a.cfg.HookNames, ",")))
		default:
			served = append(served, h)
		}
	}
	return served, foreign
}

// nothingToDo reports, with why, a task of lifecycle hooks only that has
// nothing to act on: all of its hooks belong to foreign groups, or every
// one answered its first heartbeat with "No active Lifecycle Action" (the
// action is over: completed by an earlier delivery, or timed out).
func (a *Actor) nothingToDo(t handler.Task, hooks []hook, foreign []string) (string, bool) {
	if !onlyHooks(t) {
		return "", false
	}
	if len(hooks) == 0 && len(foreign) > 0 {
		return strings.Join(slices.Compact(foreign), "; "), true
	}
	if a.keeper.inactive(hooks) {
		return "lifecycle action no longer active (completed by an earlier delivery, or timed out): nothing to drain", true
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
