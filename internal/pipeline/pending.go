package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/lifecycle"
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
// (afterCordon), then the check. Nil when there is neither.
func (a *Actor) beforeEvictions(id string, check *pendingCheck) func(context.Context) error {
	gate := a.afterCordon(id)
	if gate == nil && check == nil {
		return nil
	}
	return func(ctx context.Context) error {
		if gate != nil {
			gate(ctx)
		}
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
// for them is given back (its cordon, taint and marks undone) and the
// hooks are left alone. ok is false when the drain stands.
func (a *Actor) notPending(ctx context.Context, check *pendingCheck, client kubernetes.Interface, t handler.Task, p event.Interruption, node string, log *slog.Logger) (handler.Result, bool) {
	if check == nil || check.passed.Load() {
		return handler.Result{}, false
	}
	a.gates.leave(t.InstanceID) // cordoned: nothing of the batch waits for it, nor do the first heartbeats
	if check.wait(ctx) == nil {
		return handler.Result{}, false
	}
	r := handler.Result{Status: handler.StatusIgnored, Node: node}
	read, err := client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err == nil {
		if _, drained := drain.ReadSummary(read); drained {
			// A drain reached its evictions under this hold (a duplicate
			// delivery that found the action pending, then completed it):
			// the instance is going, the node stays as that drain left it.
			r.Reason = fmt.Sprintf("%s; node %s stays held: a drain of it already ran", whyNotPending, node)
			return r, true
		}
	}
	var g drain.Given
	if err == nil {
		g, err = drain.UncordonRead(ctx, client, read, drain.Match{Kinds: []string{string(p.Kind)}, EventID: p.EventID})
	}
	switch {
	case err != nil && isNotFound(err):
		r.Reason = fmt.Sprintf("%s; node %s is gone", whyNotPending, node)
	case err != nil:
		log.Error("lifecycle action no longer active, but its node could not be given back", "error", err)
		r.Reason = fmt.Sprintf("%s; giving node %s back failed, it stays cordoned: %v", whyNotPending, node, err)
	case g.Back:
		log.Info("lifecycle action no longer active: node given back before any eviction", "changed", g.Changed)
		r.Reason = fmt.Sprintf("%s; gave node %s back before any eviction: undid %v", whyNotPending, node, g.Changed)
	default:
		r.Reason = fmt.Sprintf("%s; node %s left as it is: %s", whyNotPending, node, g.Reason)
	}
	return r, true
}
