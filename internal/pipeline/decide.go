package pipeline

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/restore"
)

// Step is what the actor does next with a task.
type Step int

// The steps Decide chooses between.
const (
	StepAct     Step = iota // look the instance up, then cordon or drain its node
	StepLaunch              // complete launch hooks (nothing is cordoned)
	StepRestore             // give back a node Drainpipe holds
	StepIgnore              // acknowledge without acting; the Result says why
)

// Rules are the settings Decide applies: every check of a task that needs
// no call.
type Rules struct {
	MaxEventAge   time.Duration
	ASGNames      []string
	ASGNamePrefix string
	HookNames     []string
}

// Rules are the settings of c that Decide applies.
func (c Config) Rules() Rules {
	return Rules{MaxEventAge: c.MaxEventAge, ASGNames: c.ASGNames, ASGNamePrefix: c.ASGNamePrefix, HookNames: c.HookNames}
}

// Decide is the actor's first decision, made from the task and the clock
// alone, before any AWS or Kubernetes call. `drainpipe explain` runs it
// too, so its verdict is the function's. The task returned has no
// lifecycle hooks Drainpipe leaves alone (Rules.foreign), and its restores
// dropped when the step is StepAct or StepIgnore.
func Decide(t handler.Task, r Rules, now time.Time) (handler.Task, Step, handler.Result) {
	if t.InstanceID == "" {
		return t, StepIgnore, ignored("task names no instance")
	}
	t, foreign := r.served(t)
	if len(t.Interruptions) == 0 && len(foreign) > 0 {
		return t, StepIgnore, ignored(strings.Join(slices.Compact(foreign), "; "))
	}
	if restore.OnlyLaunches(t.Interruptions) {
		return t, StepLaunch, handler.Result{}
	}
	if _, ok := restoreOf(t); ok {
		return t, StepRestore, handler.Result{}
	}
	t.Interruptions = restore.Without(t.Interruptions)
	if !acts(t.Action) {
		return t, StepIgnore, ignored(fmt.Sprintf("policy action for %s is %q", strings.Join(kinds(t), ","), t.Action))
	}
	if why, stale := staleTask(t, r.MaxEventAge, now); stale {
		return t, StepIgnore, ignored(why)
	}
	return t, StepAct, handler.Result{}
}

// served returns t without the lifecycle hooks Drainpipe leaves alone, and
// why each was left.
func (r Rules) served(t handler.Task) (handler.Task, []string) {
	var foreign []string
	kept := slices.DeleteFunc(slices.Clone(t.Interruptions), func(in event.Interruption) bool {
		if in.Lifecycle == nil {
			return false
		}
		why, _ := r.foreign(in.Lifecycle.ASG, in.Lifecycle.Hook)
		if why != "" {
			foreign = append(foreign, why)
		}
		return why != ""
	})
	if len(foreign) > 0 {
		t.Interruptions = kept
	}
	return t, foreign
}

// servesGroups reports whether the served groups are restricted (the
// stack always restricts them; local runs may not).
func (r Rules) servesGroups() bool {
	return len(r.ASGNames) > 0 || r.ASGNamePrefix != ""
}

// foreign says why Drainpipe leaves hook of group asg alone, empty when it
// serves it: hooks of groups not served (forged or misrouted messages:
// never heartbeated nor completed, since that would let another group's
// instance go; ofGroup is then true) and hooks another tool owns
// (HookNames).
func (r Rules) foreign(asg, hook string) (why string, ofGroup bool) {
	switch {
	case r.servesGroups() && !slices.Contains(r.ASGNames, asg) &&
		(r.ASGNamePrefix == "" || !strings.HasPrefix(asg, r.ASGNamePrefix)):
		return fmt.Sprintf("lifecycle hook of group %s, which Drainpipe does not serve "+
			"(DRAINPIPE_ASG_NAMES, DRAINPIPE_ASG_NAME_PREFIX)", asg), true
	case len(r.HookNames) > 0 && !slices.Contains(r.HookNames, hook):
		return fmt.Sprintf("lifecycle hook %s of group %s is not one Drainpipe serves "+
			"(DRAINPIPE_LIFECYCLE_HOOK_NAMES=%s): left to its owner", hook, asg, strings.Join(r.HookNames, ",")), false
	}
	return "", false
}
