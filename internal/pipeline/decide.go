package pipeline

import (
	"fmt"
	"strings"
	"time"

	"github.com/drainpipe/drainpipe/internal/handler"
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

// Decide is the actor's first decision, made from the task and the clock
// alone, before any AWS or Kubernetes call. `drainpipe explain` runs it
// too, so its verdict is the function's. The task returned has its
// restores dropped when the step is StepAct or StepIgnore.
func Decide(t handler.Task, maxAge time.Duration, now time.Time) (handler.Task, Step, handler.Result) {
	if t.InstanceID == "" {
		return t, StepIgnore, ignored("task names no instance")
	}
	if onlyLaunches(t) {
		return t, StepLaunch, handler.Result{}
	}
	if _, ok := restoreOf(t); ok {
		return t, StepRestore, handler.Result{}
	}
	t = withoutRestores(t)
	if !acts(t.Action) {
		return t, StepIgnore, ignored(fmt.Sprintf("policy action for %s is %q", strings.Join(kinds(t), ","), t.Action))
	}
	if why, stale := staleTask(t, maxAge, now); stale {
		return t, StepIgnore, ignored(why)
	}
	return t, StepAct, handler.Result{}
}
