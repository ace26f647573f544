package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/group"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/instance"
)

// noWaitWithin: an interruption whose deadline is nearer than this never
// waits for a drain slot of its group (a scheduled change days away does).
const noWaitWithin = time.Hour

// drainTarget is what a drain needs beyond its request: the cluster, the
// task and its hooks (for the group limit), and the instance.
type drainTarget struct {
	cluster string
	client  kubernetes.Interface
	task    handler.Task
	hooks   []hook
	inst    instance.Instance
	stopped bool
}

// enterGroup applies DRAINPIPE_GROUP_MAX_DRAINING to a drain without a
// hard deadline: it takes a drain slot of the node's group, waiting
// within ctx (the drain's budget) while every slot is taken, the node
// cordoned meanwhile but not evicted. leave, called with the drain's
// result and a context with time left (the task's, not the spent
// budget), frees the slot unless the drain goes on in a redelivery. When
// no slot came free in time, wait is true and r says so: the record comes
// back by its retry window, its hooks heartbeated meanwhile.
func (a *Actor) enterGroup(ctx context.Context, dt drainTarget, d Drainer, req drain.Request, log *slog.Logger) (leave func(context.Context, handler.Result), r handler.Result, wait bool) {
	leave = func(context.Context, handler.Result) {}
	if a.groups == nil || !req.Evict || dt.stopped || !mayWait(dt.task, a.clock.Now()) {
		return leave, r, false
	}
	if why, last := a.lastDelivery(ctx, dt); last {
		log.Warn("draining without waiting for a slot of the node's group: "+why, "node", req.Node)
		return leave, r, false
	}
	var cordonErr error
	slot, err := a.groups.Enter(ctx, dt.client, group.Who{Node: req.Node, ASG: groupOf(dt)}, func(b group.Busy) {
		only := req
		only.Evict = false
		_, cordonErr = d.Run(ctx, only)
	})
	var busy *group.Busy
	switch {
	case errors.As(err, &busy) && cordonErr != nil:
		return leave, retry(fmt.Sprintf("cordoning node %s while it waits for a drain slot: %v", req.Node, cordonErr)), true
	case errors.As(err, &busy):
		return leave, retry(fmt.Sprintf("node %s cordoned, not evicted: %v (DRAINPIPE_GROUP_MAX_DRAINING); waiting "+
			"for one on redelivery", req.Node, busy)), true
	case err != nil:
		// The limit spares budgets; it must not stall a drain.
		log.Error("group limit unavailable: draining without it", "node", req.Node, "error", err)
		return leave, r, false
	case slot == nil:
		return leave, r, false
	}
	log.Info("holding a drain slot", "group", slot.Group().Name, "lease", slot.Name())
	stop := slot.Keep(ctx)
	return func(ctx context.Context, r handler.Result) {
		stop()
		if r.Status == handler.StatusRetry {
			return // kept for the redelivery; it expires if none comes
		}
		if err := slot.Release(ctx); err != nil {
			log.Warn("releasing drain slot (it expires on its own)", "lease", slot.Name(), "error", err)
		}
	}, r, false
}

// lastDelivery says why the drain must not wait: its record is on its
// last delivery, or a hook would be completed before the next one.
// Waiting then would let the instance go undrained.
func (a *Actor) lastDelivery(ctx context.Context, dt drainTarget) (string, bool) {
	if dt.task.ReceiveCount >= a.cfg.MaxReceiveCount {
		return fmt.Sprintf("last delivery (receive count %d, max %d)", dt.task.ReceiveCount, a.cfg.MaxReceiveCount), true
	}
	for _, h := range dt.hooks {
		if why, last := a.keeper.LastChance(ctx, h); last {
			return why, true
		}
	}
	return "", false
}

// mayWait reports whether every interruption of t leaves time to wait:
// terminate lifecycle hooks, rebalance recommendations, and scheduled
// changes at least noWaitWithin away. A Spot or capacity warning, or an
// instance stopping, never waits.
func mayWait(t handler.Task, now time.Time) bool {
	for _, in := range t.Interruptions {
		switch in.Kind {
		case event.KindASGLifecycle, event.KindRebalanceRecommendation, event.KindScheduledChange:
		default:
			return false
		}
		if !in.Deadline.IsZero() && in.Deadline.Before(now.Add(noWaitWithin)) {
			return false
		}
	}
	return len(t.Interruptions) > 0
}

// groupOf is the Auto Scaling group of the task: its hook's, else the
// instance's tag.
func groupOf(dt drainTarget) string {
	for _, h := range dt.hooks {
		if h.ASG != "" {
			return h.ASG
		}
	}
	return strings.TrimSpace(dt.inst.Tags[GroupTag])
}
