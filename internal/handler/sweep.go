package handler

import (
	"context"

	"github.com/drainpipe/drainpipe/internal/event"
)

// isSweep reports whether t is the batch's sweep: the one task its sweep
// messages make (keyed by sweepKey, so it holds nothing else).
func isSweep(t Task) bool {
	return t.InstanceID == "" && t.Reservation == "" && len(t.Interruptions) > 0 &&
		t.Interruptions[0].Kind == event.KindSweep
}

// dispatch hands a task to whoever carries it out: the sweep to the
// Sweeper, every other task to the Actor.
func (h *Handler) dispatch(ctx context.Context, t Task) Result {
	if !isSweep(t) {
		return h.opts.Actor.Act(ctx, t)
	}
	if h.opts.Sweeper == nil {
		return Result{Status: StatusIgnored, Reason: "no sweep is configured"}
	}
	return h.opts.Sweeper.Sweep(ctx)
}
