// Package policy decides what Drainpipe does for each kind of interruption.
package policy

import "fmt"

// Action is what to do to the node of an interrupted instance. Actions are
// ordered: a stronger action includes every weaker one.
type Action string

// The actions, weakest first.
const (
	ActionNone           Action = "none"
	ActionCordon         Action = "cordon"
	ActionCordonAndDrain Action = "cordon-and-drain"
)

// rank orders the actions; an unknown action ranks below none.
func (a Action) rank() int {
	switch a {
	case ActionNone:
		return 0
	case ActionCordon:
		return 1
	case ActionCordonAndDrain:
		return 2
	default:
		return -1
	}
}

// Valid reports whether a is one of the known actions.
func (a Action) Valid() bool { return a.rank() >= 0 }

// ParseAction reads an action's name.
func ParseAction(s string) (Action, error) {
	a := Action(s)
	if !a.Valid() {
		return "", fmt.Errorf("unknown action %q (want none, cordon or cordon-and-drain)", s)
	}
	return a, nil
}

// Strongest returns the strongest of the actions, or none when there are
// none.
func Strongest(actions ...Action) Action {
	best := ActionNone
	for _, a := range actions {
		if a.rank() > best.rank() {
			best = a
		}
	}
	return best
}
