package handler

import (
	"context"
	"fmt"
)

// flush gives f until a quarter of the reserve before the deadline, the
// same bound as OnRetry, turning a panic into a log line.
func (h *Handler) flush(ctx context.Context, f Flusher) {
	ctx, cancel := h.beforeAnswer(ctx)
	defer cancel()
	defer func() {
		if p := recover(); p != nil {
			h.opts.Log.ErrorContext(ctx, "flushing the actor panicked", "panic", fmt.Sprint(p))
		}
	}()
	f.Flush(ctx)
}

// beforeAnswer bounds work done after the outcomes are settled: it ends a
// quarter of DeadlineReserve before the invocation's deadline, keeping the
// rest to answer.
func (h *Handler) beforeAnswer(ctx context.Context) (context.Context, context.CancelFunc) {
	if deadline, ok := ctx.Deadline(); ok && h.opts.DeadlineReserve > 0 {
		return context.WithDeadline(ctx, deadline.Add(-h.opts.DeadlineReserve/4))
	}
	return ctx, func() {}
}
