package policy

import (
	"fmt"

	"github.com/drainpipe/drainpipe/internal/event"
)

// Policy maps each kind of interruption to its action. Auto Scaling
// terminate hooks are always completed, whatever their action.
type Policy map[event.Kind]Action

// Default is the policy when nothing is configured: each kind's default
// action from the kinds table.
func Default() Policy {
	p := Policy{}
	for _, r := range event.Table() {
		if r.Setting != "" {
			p[r.Kind] = Action(r.DefaultAction)
		}
	}
	return p
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
	r, _ := event.Info(k)
	return r.Setting
}

// IgnoreReason explains why an interruption of kind k is not acted on when
// its action is none.
func IgnoreReason(k event.Kind) string {
	return fmt.Sprintf("policy: %s is none (%s)", k, Var(k))
}
