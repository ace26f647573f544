// Package policy decides what Drainpipe does for each kind of interruption.
package policy

import (
	"fmt"
	"slices"
)

// Action is what to do to the node of an interrupted instance. Actions are
// ordered: a stronger action includes every weaker one.
type Action string

// The actions, weakest first.
const (
	ActionNone           Action = "none"
	ActionCordon         Action = "cordon"
	ActionCordonAndDrain Action = "cordon-and-drain"
)

// byRank lists the actions weakest first: an action's rank is its index.
var byRank = []Action{ActionNone, ActionCordon, ActionCordonAndDrain}

// rank orders the actions; an unknown action ranks below none.
func (a Action) rank() int { return slices.Index(byRank, a) }

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
	// The highest rank found, never below none's, names the action: no
	// comparison of two equal ranks can choose between two actions.
	best := ActionNone.rank()
	for _, a := range actions {
		best = max(best, a.rank())
	}
	return byRank[best]
}
