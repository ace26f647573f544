package handler

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// cannotAct answers a batch the invocation has no time to act on (the
// function's timeout is within DeadlineReserve): every task is retried,
// but hooks on their last delivery are still completed, or their
// instances would be held until the hooks time out while the records go
// to the dead-letter queue.
func (h *Handler) cannotAct(ctx context.Context, tasks []Task) []taskResult {
	left := time.Duration(0)
	if dl, ok := ctx.Deadline(); ok {
		left = time.Until(dl)
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, dl.Add(-left/4)) // keep a quarter to answer
		defer cancel()
	}
	h.opts.Log.LogAttrs(ctx, slog.LevelError, "invocation cannot act: its time is within the deadline reserve; "+
		"only lifecycle hooks on their last delivery are completed, everything else is retried. "+
		"Raise the function timeout above DRAINPIPE_DEADLINE_RESERVE plus DRAINPIPE_HOOK_RESERVE",
		slog.Float64("time_left_ms", ms(left)), slog.Float64("deadline_reserve_ms", ms(h.opts.DeadlineReserve)),
		slog.Int("tasks", len(tasks)))
	reason := fmt.Sprintf("not started: invocation had %s left, within the deadline reserve %s",
		left.Round(time.Millisecond), h.opts.DeadlineReserve)
	results := make([]taskResult, len(tasks))
	for i, t := range tasks {
		r := Result{Status: StatusRetry, Reason: reason}
		if h.completer != nil && !isSweep(t) {
			r = h.completer.CompleteLastDelivery(ctx, t)
			r.Reason = reason + "; " + r.Reason
		}
		results[i] = taskResult{Result: r, finished: true, end: time.Now()}
	}
	return results
}
