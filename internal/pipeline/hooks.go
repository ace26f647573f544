package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/lifecycle"
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
			why, last := a.lastChance(ctx, h)
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
		if err := a.complete(ctx, h, log); err != nil {
			failed = append(failed, err.Error())
			pending = append(pending, h)
		}
	}
	if len(failed) > 0 {
		r.Status = handler.StatusRetry
		r.Reason += "; " + strings.Join(failed, "; ")
	}
	if r.Status == handler.StatusRetry && len(pending) > 0 {
		r.RetryWithin = a.retryWithin(ctx, pending)
	}
	return r, pending
}

// lastChance reports whether this attempt is the last one able to complete
// h in time, with why: the record that carried it is on its last delivery,
// or the action would pass its global timeout before the next one.
func (a *Actor) lastChance(ctx context.Context, h hook) (string, bool) {
	if h.ReceiveCount >= a.cfg.MaxReceiveCount {
		return fmt.Sprintf("last delivery (receive count %d, max %d)", h.ReceiveCount, a.cfg.MaxReceiveCount), true
	}
	end := a.clock.Now()
	if dl, ok := ctx.Deadline(); ok {
		end = end.Add(time.Until(dl))
	}
	if maxAge := a.maxAge(ctx, h); !h.Time.IsZero() && end.Sub(h.Time) >= maxAge {
		return fmt.Sprintf("lifecycle action is %s old, near its global timeout (max hook age %s)",
			end.Sub(h.Time).Round(time.Second), maxAge), true
	}
	return "", false
}

// completeAttempts bounds the completion calls of one hook in one attempt,
// each with the SDK's own retries; the hook reserve bounds their time.
const completeAttempts = 3

// complete sends CONTINUE for one lifecycle action, retrying within the
// context (the hook reserve) when Auto Scaling fails. Only a completion
// that was not already done counts as successful (duplicates find it done).
func (a *Actor) complete(ctx context.Context, h hook, log *slog.Logger) error {
	log = log.With("asg", h.ASG, "hook", h.Hook)
	if a.cfg.DryRun {
		log.Info("dry run: would complete lifecycle hook")
		return nil
	}
	var err error
	for attempt := 1; ; attempt++ {
		var already bool
		already, err = a.hooks.Complete(ctx, h.Lifecycle)
		a.rec.RecordHook(HookComplete, h.Lifecycle, already, err)
		if err == nil {
			log.Info("completed lifecycle hook", "already_done", already, "attempts", attempt)
			return nil
		}
		if attempt == completeAttempts || ctx.Err() != nil {
			break
		}
		log.Warn("completing lifecycle hook failed; retrying", "attempt", attempt, "error", err)
		select {
		case <-time.After(time.Duration(attempt) * a.cfg.CompleteBackoff):
		case <-ctx.Done():
		}
	}
	return fmt.Errorf("completing lifecycle hook %s of %s: %w", h.Hook, h.ASG, err)
}

// heartbeat extends one hook's heartbeat timeout and reports whether the
// action is over. Other failures are logged, not fatal: the call may be
// throttled (the next one may pass), and completion tells the rest.
func (a *Actor) heartbeat(ctx context.Context, h hook) (inactive, failed bool) {
	if a.cfg.DryRun {
		return false, false
	}
	err := a.hooks.Heartbeat(ctx, h.Lifecycle)
	a.rec.RecordHook(HookHeartbeat, h.Lifecycle, false, err)
	switch {
	case err == nil || ctx.Err() != nil:
	case errors.Is(err, lifecycle.ErrInactive): // completed by a duplicate, or timed out
		a.log.Info("lifecycle hook no longer pending", "asg", h.ASG, "hook", h.Hook, "instance_id", h.InstanceID)
		return true, false
	default:
		a.log.Warn("heartbeating lifecycle hook", "asg", h.ASG, "hook", h.Hook, "instance_id", h.InstanceID, "error", err)
		return false, true
	}
	return false, false
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
		if err := a.complete(ctx, h, log); err != nil {
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
		r.RetryWithin = a.retryWithin(ctx, pending)
	}
	return r
}
