// Package policy decides what Drainpipe does for each kind of interruption.
package policy

// Action is what to do to the node of an interrupted instance. Actions are
// ordered: a stronger action includes every weaker one.
type Action string

// The actions, weakest first.
const (
	ActionNone           Action = "none"
	ActionCordon         Action = "cordon"
	ActionCordonAndDrain Action = "cordon-and-drain"
)
