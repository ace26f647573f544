package pipeline

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"

	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/lifecycle"
	"github.com/drainpipe/drainpipe/internal/restore"
)

// errNotPending stops a drain before its first eviction: every lifecycle
// action of its task answered its first heartbeat "No active Lifecycle
// Action".
var errNotPending = errors.New("lifecycle action no longer active")

// whyNotPending is the reason of a task whose actions are over.
const whyNotPending = "lifecycle action no longer active (completed by an earlier delivery, or timed out): nothing to drain"

// pendingCheck holds the evictions of a task of lifecycle hooks alone
// until their first heartbeats have answered, and stops them when every
// action is over. The cordon does not wait: the heartbeats run meanwhile
// (a wave's evictions wait for their batch's cordons anyway).
type pendingCheck struct {
	k      *lifecycle.Keeper
	hooks  []hook
	passed atomic.Bool // evictions were let go
}

// pendingCheck is nil for a task with other notices (their threat stands
// whatever the hooks say) and in a dry run (nothing is heartbeated).
func (a *Actor) pendingCheck(t handler.Task, hooks []hook) *pendingCheck {
	if a.cfg.DryRun || len(hooks) == 0 || !onlyHooks(t) {
		return nil
	}
	return &pendingCheck{k: a.keeper, hooks: hooks}
}

// wait waits, until ctx ends, for the hooks' first heartbeats, and returns
// errNotPending when every action is over.
func (c *pendingCheck) wait(ctx context.Context) error {
	c.k.Answered(ctx, c.hooks)
	if c.k.Inactive(c.hooks) {
		return errNotPending
	}
	return nil
}

// beforeEvictions is the drain request's AfterCordon: the batch's gate
// and hand-off (afterCordon), then the check.
func (a *Actor) beforeEvictions(id string, check *pendingCheck) func(context.Context) error {
	gate := a.afterCordon(id)
	return func(ctx context.Context) error {
		gate(ctx)
		if check == nil {
			return nil
		}
		if err := check.wait(ctx); err != nil {
			return err
		}
		check.passed.Store(true)
		return nil
	}
}

// notPending settles a drain stopped, or never let go to evict, by the
// check: when every action turned out over, the node Drainpipe cordoned
// for them is given back (restore.Unevicted) and the hooks are left
// alone. Only the holds this delivery took end (by): one an earlier
// delivery of the action took stands, as that delivery acted on it. ok is
// false when the drain stands.
func (a *Actor) notPending(ctx context.Context, check *pendingCheck, client kubernetes.Interface, t handler.Task, p event.Interruption, node, by string, log *slog.Logger) (handler.Result, bool) {
	if check == nil || check.passed.Load() {
		return handler.Result{}, false
	}
	a.gates.leave(t.InstanceID) // cordoned: nothing of the batch waits for it, nor do the first heartbeats
	if check.wait(ctx) == nil {
		return handler.Result{}, false
	}
	return handler.Result{Status: handler.StatusIgnored, Node: node,
		Reason: whyNotPending + "; " + restore.Unevicted(ctx, client, node, p, by, log)}, true
}
