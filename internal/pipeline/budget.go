package pipeline

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/handler"
)

// minCordonTime is the least time left worth a cordon-only attempt.
const minCordonTime = time.Second

// cordonOnly runs when the budget is spent before the drain begins (a
// function timeout barely above the reserves): the node is still cordoned
// within half of what is left, since a cordon takes milliseconds and keeps
// new pods off a node that is going away; the drain waits for a delivery
// with time, and the misconfiguration is logged as an error.
func (a *Actor) cordonOnly(ctx context.Context, d Drainer, req drain.Request, log *slog.Logger) handler.Result {
	why := fmt.Sprintf("no time left to %s node %s (hook reserve %s)", verb(req), req.Node, a.cfg.HookReserve)
	log.Error("invocation leaves no time to drain: make the function timeout longer than DRAINPIPE_DEADLINE_RESERVE "+
		"plus DRAINPIPE_HOOK_RESERVE", "node", req.Node, "hook_reserve", a.cfg.HookReserve)
	dl, ok := ctx.Deadline()
	if !ok || time.Until(dl) < minCordonTime {
		return retry(why)
	}
	cctx, cancel := context.WithTimeout(ctx, time.Until(dl)/2)
	defer cancel()
	only := req
	only.Evict = false
	if _, err := d.Run(cctx, only); err != nil {
		return retry(fmt.Sprintf("%s; cordoning it: %v", why, err))
	}
	return retry(why + "; cordoned it meanwhile")
}

// cordonIfLate turns the request of a threat whose deadline has passed
// (Spot hibernate has no warning at all) into cordon and taint only, and
// says so: the node is still there, and the instance's state changes drive
// the rest. The passed deadline is still recorded on the node (the sweep
// gives the node back once the instance has outlived it by its margin).
// Empty when the deadline is ahead (or is our own StoppedWait).
func cordonIfLate(req *drain.Request, now time.Time, stopped bool) string {
	if req.Deadline.IsZero() || now.Before(req.Deadline) || stopped {
		return ""
	}
	late := fmt.Sprintf("%s deadline passed %s ago: cordon and taint only (the instance's state changes drive the rest); ",
		req.Kind, now.Sub(req.Deadline).Round(time.Second))
	req.Evict, req.Deadline, req.PassedDeadline = false, time.Time{}, req.Deadline
	return late
}

// stopAt is when the drain stops waiting: the instance's deadline less
// the safety margin, or the deadline itself (margin 0) when less than the
// margin is left or the deadline is our own wait for a stopped instance.
func (a *Actor) stopAt(deadline time.Time, stopped bool) (time.Time, time.Duration) {
	if deadline.IsZero() || stopped || a.cfg.SafetyMargin <= 0 {
		return deadline, 0
	}
	if at := deadline.Add(-a.cfg.SafetyMargin); at.After(a.clock.Now()) {
		return at, a.cfg.SafetyMargin
	}
	return deadline, 0
}

// budget bounds the drain by the context's deadline less the reserve and by
// the instance's deadline (measured on the Actor's clock); it also ends,
// with the batch's cause, when the batch gives way (handler.Yielding),
// while ctx itself lives on to settle the hooks.
func (a *Actor) budget(ctx context.Context, deadline time.Time) (context.Context, context.CancelFunc) {
	ctx, cancelBounds := a.bounds(ctx, deadline)
	ctx, cancelYield := yieldable(ctx)
	return ctx, func() {
		cancelYield()
		cancelBounds()
	}
}

// yieldable returns ctx ending also, with the batch's cause, when the
// batch gives way (handler.Yielding).
func yieldable(ctx context.Context) (context.Context, context.CancelFunc) {
	y := handler.Yielding(ctx)
	if y.Done() == nil {
		return ctx, func() {}
	}
	ctx, c := context.WithCancelCause(ctx)
	stop := context.AfterFunc(y, func() { c(context.Cause(y)) })
	return ctx, func() { stop(); c(nil) }
}

// bounds is budget without the batch's giving way: the drain's own
// requests, which a give-way ends through drain.Request.Yield instead,
// once each pod has had its eviction sent.
func (a *Actor) bounds(ctx context.Context, deadline time.Time) (context.Context, context.CancelFunc) {
	var cancels []context.CancelFunc
	if dl, ok := ctx.Deadline(); ok {
		var c context.CancelFunc
		ctx, c = context.WithDeadline(ctx, dl.Add(-a.cfg.HookReserve))
		cancels = append(cancels, c)
	}
	if !deadline.IsZero() {
		var c context.CancelFunc
		ctx, c = context.WithTimeout(ctx, deadline.Sub(a.clock.Now()))
		cancels = append(cancels, c)
	}
	return ctx, func() {
		for _, c := range cancels {
			c()
		}
	}
}

// firstBlock names the first pod still blocked and its budget, so the
// record's reason (and the webhook's message) says what holds the drain.
func firstBlock(r drain.Report) string {
	for _, b := range r.Blocks {
		if !b.Evicted && b.Budget != "" {
			return fmt.Sprintf(" (first: %s by PodDisruptionBudget %s, refused %d times)", b.Pod, b.Budget, b.Refusals)
		}
	}
	return ""
}

// LateNote is what cordonIfLate says of the task's primary interruption
// at now ("" while its deadline is ahead), so `drainpipe explain` gives the
// function's verdict without an instance to look up.
func LateNote(t handler.Task, now time.Time) string {
	p := primary(t)
	req := drain.Request{Kind: string(p.Kind), Deadline: p.Deadline, Evict: true}
	return cordonIfLate(&req, now, false)
}
