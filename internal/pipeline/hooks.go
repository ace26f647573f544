package pipeline

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/drainpipe/drainpipe/internal/handler"
)

// settleHooks completes the task's lifecycle hooks when its outcome is
// final, and decides each on its own when it is Retry (lifecycle.Keeper's
// Settle); the hooks left pending are returned. A failed completion turns
// the outcome into Retry.
func (a *Actor) settleHooks(ctx context.Context, hooks []hook, r handler.Result, log *slog.Logger) (handler.Result, []hook) {
	if len(hooks) == 0 {
		return r, nil
	}
	var pending []hook
	var failed bool
	r.Reason, pending, failed = a.keeper.Settle(ctx, hooks, r.Status == handler.StatusRetry, r.Reason, r.Node, log)
	if failed {
		r.Status = handler.StatusRetry
	}
	if r.Status == handler.StatusRetry && len(pending) > 0 {
		r.RetryWithin = a.keeper.RetryWithin(ctx, pending)
	}
	return r, pending
}

// isNotFound reports a Kubernetes NotFound anywhere in err's chain.
func isNotFound(err error) bool {
	return apierrors.IsNotFound(err)
}

// CompleteLastDelivery completes, without acting on the node, the task's
// lifecycle hooks whose records are on their last delivery: the handler
// calls it when the invocation has no time to act. The task is retried.
func (a *Actor) CompleteLastDelivery(ctx context.Context, t handler.Task) handler.Result {
	log := a.log.With("instance_id", t.InstanceID, "receive_count", t.ReceiveCount)
	completed, failed, pending := a.keeper.CompleteLast(ctx, a.servedHooks(hooksOf(t), log), log)
	reason := fmt.Sprintf("%d lifecycle hook(s) on their last delivery completed without draining", completed)
	if len(failed) > 0 {
		reason += "; " + strings.Join(failed, "; ")
	}
	r := retry(reason)
	if len(pending) > 0 {
		r.RetryWithin = a.keeper.RetryWithin(ctx, pending)
	}
	return r
}
