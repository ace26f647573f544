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
// final. When the drain must go on, each hook is decided on its own: one
// whose records are on their last delivery, or whose action is near its
// global timeout, is completed anyway (and said so loudly); the others are
// left pending, and returned. A failed completion turns the outcome into
// Retry.
func (a *Actor) settleHooks(ctx context.Context, hooks []hook, r handler.Result, log *slog.Logger) (handler.Result, []hook) {
	if len(hooks) == 0 {
		return r, nil
	}
	due := hooks
	var pending []hook // left to the next delivery
	if r.Status == handler.StatusRetry {
		due = nil
		for _, h := range hooks {
			why, last := a.keeper.LastChance(ctx, h)
			if !last {
				pending = append(pending, h)
				continue
			}
			log.Error("completing lifecycle hook before drain finished", "asg", h.ASG, "hook", h.Hook, "why", why,
				"reason", r.Reason, "node", r.Node)
			r.Reason += fmt.Sprintf("; lifecycle hook %s of %s completed before drain finished: %s", h.Hook, h.ASG, why)
			due = append(due, h)
		}
		if len(pending) > 0 {
			r.Reason += fmt.Sprintf("; %d lifecycle hook(s) left pending", len(pending))
		}
	}
	var failed []string
	for _, h := range due {
		if err := a.keeper.Complete(ctx, h, log); err != nil {
			failed = append(failed, err.Error())
			pending = append(pending, h)
		}
	}
	if len(failed) > 0 {
		r.Status = handler.StatusRetry
		r.Reason += "; " + strings.Join(failed, "; ")
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
	hooks := a.servedHooks(hooksOf(t), log)
	completed, failed := 0, []string{}
	var pending []hook
	for _, h := range hooks {
		if h.ReceiveCount < a.cfg.MaxReceiveCount {
			pending = append(pending, h)
			continue
		}
		log.Error("completing lifecycle hook without draining: no time to act on its last delivery",
			"asg", h.ASG, "hook", h.Hook, "receive_count", h.ReceiveCount)
		if err := a.keeper.Complete(ctx, h, log); err != nil {
			failed = append(failed, err.Error())
			pending = append(pending, h)
			continue
		}
		completed++
	}
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
