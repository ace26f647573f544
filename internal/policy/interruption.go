package policy

import "github.com/drainpipe/drainpipe/internal/event"

// ForInterruption returns the action for one interruption: its kind's
// action, capped at cordon when the notice itself says it warrants no more
// (event.Interruption.CordonOnly). A restore has no action of its own.
func (p Policy) ForInterruption(in event.Interruption) Action {
	if in.Restore {
		return ActionNone
	}
	a := p.For(in.Kind)
	if in.CordonOnly != "" && a == ActionCordonAndDrain {
		return ActionCordon
	}
	return a
}
