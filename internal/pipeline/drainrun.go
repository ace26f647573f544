package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/handler"
)

// drain runs the drainer until it is done, the budget (the context's
// deadline less the hook reserve) runs out, or the instance's deadline
// passes; the keeper heartbeats the hooks meanwhile. A drain without a
// hard deadline first takes a slot of its node's group (enterGroup).
func (a *Actor) drain(ctx context.Context, dt drainTarget, d Drainer, req drain.Request, log *slog.Logger) handler.Result {
	stopAt, margin := a.stopAt(req.Deadline, dt.stopped)
	bctx, cancelReport := a.reportBy(ctx, &req)
	defer cancelReport()
	// The Run's requests (rctx) outlive a give-way, which ends the Run
	// through req.Yield once its pods are sent their evictions; the waits
	// before it (dctx) end with the give-way itself.
	rctx, cancelRun := a.bounds(bctx, stopAt)
	defer cancelRun()
	dctx, cancel := yieldable(rctx)
	defer cancel()
	if dctx.Err() != nil {
		return a.cordonOnly(ctx, d, req, log)
	}
	leave, r, wait := a.enterGroup(dctx, dt, d, req, log)
	if wait {
		return r
	}
	if y := handler.Yielding(ctx); y.Done() != nil {
		req.Yield = y
	}
	r = a.runDrain(dctx, rctx, dt, d, req, stopAt, margin, log)
	leave(ctx, r)
	return r
}

// reportReserve is the least time the drain report's write keeps when the
// drain runs to the end of its budget: the drain stops this much sooner.
const reportReserve = 2 * time.Second

// reportBy gives the drain report's write the invocation's time less the
// hook reserve (not a fixed limit a slow API server exceeds), and returns
// ctx ending reportReserve sooner, for the drain, so the write keeps at
// least that when the drain uses its whole budget.
func (a *Actor) reportBy(ctx context.Context, req *drain.Request) (context.Context, context.CancelFunc) {
	dl, ok := ctx.Deadline()
	if !ok {
		return ctx, func() {}
	}
	req.ReportBy = dl.Add(-a.cfg.HookReserve)
	return context.WithDeadline(ctx, dl.Add(-reportReserve))
}

// runDrain runs the drainer once within rctx and reads its report; dctx
// is rctx ending also when the batch gives way, with its cause.
func (a *Actor) runDrain(dctx, rctx context.Context, dt drainTarget, d Drainer, req drain.Request, stopAt time.Time, margin time.Duration, log *slog.Logger) handler.Result {
	stopped := dt.stopped
	rep, err := d.Run(rctx, req)
	// Why the drain stopped: the batch's own cause first (dctx learns
	// it a moment later).
	cause := context.Cause(dctx)
	if req.Yield != nil && req.Yield.Err() != nil {
		cause = context.Cause(req.Yield)
	}
	a.rec.RecordDrain(dt.cluster, rep)
	log.Info("drain run", "done", rep.Done, "evicted", len(rep.Evicted), "blocked_by_pdb", len(rep.BlockedByPDB),
		"terminating", len(rep.Terminating), "skipped", len(rep.Skipped), "elapsed_ms", rep.Elapsed.Milliseconds())
	switch {
	case errors.Is(err, errNotPending): // the caller gives the node back
		return ignored(whyNotPending)
	case err != nil && isNotFound(err):
		return done(fmt.Sprintf("node %s disappeared during the drain", req.Node))
	case err != nil && errors.Is(cause, handler.ErrGaveWay):
		return retry(fmt.Sprintf("node %s cordoned, its drain left to the redelivery: %v", req.Node, cause))
	case err != nil:
		return retry(fmt.Sprintf("draining node %s: %v", req.Node, err))
	case rep.Done && !req.Evict:
		return done(fmt.Sprintf("cordoned node %s", req.Node))
	case rep.Done:
		return done(fmt.Sprintf("drained node %s: %s", req.Node, summary(rep)))
	case stopped && !a.clock.Now().Before(req.Deadline):
		return done(fmt.Sprintf("instance is stopped: evictions issued on node %s, the node controller removes what its "+
			"kubelet cannot finish: %s", req.Node, summary(rep)))
	case !stopAt.IsZero() && !a.clock.Now().Before(stopAt):
		less := ""
		if margin > 0 {
			less = fmt.Sprintf(" (less the %s safety margin)", margin)
		}
		return done(fmt.Sprintf("instance deadline passed%s before node %s finished draining: %s", less, req.Node, summary(rep)))
	case errors.Is(cause, handler.ErrGaveWay):
		return retry(fmt.Sprintf("node %s: %v (%s)", req.Node, cause, summary(rep)))
	}
	return retry(fmt.Sprintf("invocation budget ran out before node %s finished draining (%s); resuming on redelivery",
		req.Node, summary(rep)))
}

func verb(req drain.Request) string {
	if req.Evict {
		return "cordon and drain"
	}
	return "cordon"
}

func summary(r drain.Report) string {
	s := fmt.Sprintf("%d evicted, %d blocked by PDB%s, %d still terminating", len(r.Evicted), len(r.BlockedByPDB),
		firstBlock(r), len(r.Terminating))
	if len(r.Pending) > 0 {
		s += fmt.Sprintf(", %d not started", len(r.Pending))
	}
	// Pods deleted at the deadline or given up as stuck are the ones an
	// operator must hear about: budgets overridden, finalizers left.
	if len(r.DeletedAtDeadline) > 0 {
		s += fmt.Sprintf(", %d deleted at the deadline despite their budget", len(r.DeletedAtDeadline))
	}
	if len(r.Stuck) > 0 {
		s += fmt.Sprintf(", %d stuck terminating", len(r.Stuck))
	}
	if len(r.Failed) > 0 {
		s += fmt.Sprintf(", %d refused (first: %s: %s)", len(r.Failed), r.Failed[0].Pod, r.Failed[0].Reason)
	}
	return s + fmt.Sprintf(", %d skipped, in %s", len(r.Skipped), r.Elapsed.Round(time.Millisecond))
}
