package pipeline

import (
	"context"
	"log/slog"
	"time"

	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/instance"
	"github.com/drainpipe/drainpipe/internal/policy"
)

// router is what *instance.Lookup offers besides Describe: the rules that
// say why an instance belongs to no configured cluster.
type router interface {
	Router() instance.Router
}

// whyIgnored says why an instance was routed to no cluster, as precisely as
// the lookup can tell.
func (a *Actor) whyIgnored(inst instance.Instance) string {
	if r, ok := a.lookups.Source().(router); ok {
		if _, why := r.Router().Cluster(inst); why != "" {
			return string(why)
		}
	}
	return "belongs to no configured cluster or lacks the required tag"
}

// Prepare holds every lifecycle hook of a batch, keeping them alive until
// their tasks settle them (queued tasks included), and looks up every
// instance in one call (building the clusters' clients meanwhile: warm),
// before the batch's tasks are dispatched to Act. It is optional: Act
// heartbeats its hooks and looks its instance up on its own when Prepare
// was not called. Errors are kept and reported by the Act of each affected
// task.
//
// It opens the batch's gate: each drain evicts only once every node of the
// batch is cordoned (afterCordon), and the first heartbeats of the hooks
// of first deliveries follow those cordons too (cordonFirstWait at most;
// a hook is released only once its first is answered). A batch of ten
// hooked records would wait for ten heartbeats before its first cordon;
// answered later, they also leave the control plane's busiest second to
// the cordons. A redelivery's heartbeat goes at once: an
// earlier delivery may have completed the action, and its Act waits to
// know.
func (a *Actor) Prepare(ctx context.Context, tasks []handler.Task) {
	if copies(tasks) { // cordons alone: no gate, no hook kept
		if ids := copyIDs(tasks); len(ids) > 0 {
			a.warm(ctx)
			a.lookups.Prepare(ctx, ids)
		}
		return
	}
	ids := make([]string, 0, len(tasks))
	var drains []string // the batch's cordons, each evicting after all
	wave := true        // every task on its first delivery
	for _, t := range tasks {
		wave = wave && t.ReceiveCount <= 1
		if _, restore := restoreOf(t); t.InstanceID != "" && (acts(t.Action) || restore) {
			ids = append(ids, t.InstanceID)
			if !restore {
				drains = append(drains, t.InstanceID)
			}
		}
	}
	g := a.gates.open(drains, wave)
	for _, t := range tasks {
		hooks := a.servedHooks(hooksOf(t), slog.New(slog.DiscardHandler))
		after := g
		if t.ReceiveCount > 1 {
			after = nil
		}
		a.keeper.Prepare(ctx, hooks, func(ctx context.Context) { cordoned(ctx, after) })
	}
	if len(ids) > 0 {
		a.warm(ctx)
	}
	a.lookups.Prepare(ctx, ids)
}

// cordoned waits until every node of g's batch is cordoned (or its task
// has ended), or cordonFirstWait has passed, or ctx ends; at once for nil.
// The bound is in real time, not the Actor's clock: it only bounds how
// late a first heartbeat goes, never what a task decides.
func cordoned(ctx context.Context, g *batchGate) {
	if g == nil {
		return
	}
	t := time.NewTimer(cordonFirstWait)
	defer t.Stop()
	g.wait(ctx, t.C)
}

// acts reports whether an action touches the node (and so needs a lookup).
func acts(a policy.Action) bool {
	return a == policy.ActionCordon || a == policy.ActionCordonAndDrain
}
