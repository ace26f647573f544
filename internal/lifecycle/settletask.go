package lifecycle

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
)

// Settle completes a task's hooks when its outcome is final. When the
// task is retried (the drain must go on), each hook is decided on its
// own: one whose records are on their last delivery, or whose action is
// near its global timeout, is completed anyway (and said so loudly); the
// others are left pending. It returns the task's reason with what it did
// appended, the hooks left pending (those whose completion failed too),
// and whether a completion failed: then the task is retried.
func (k *Keeper) Settle(ctx context.Context, hooks []Hook, retry bool, reason, node string, log *slog.Logger) (string, []Hook, bool) {
	due := hooks
	var pending []Hook // left to the next delivery
	if retry {
		due = nil
		for _, h := range hooks {
			why, last := k.LastChance(ctx, h)
			if !last {
				pending = append(pending, h)
				continue
			}
			log.Error("completing lifecycle hook before drain finished", "asg", h.ASG, "hook", h.Hook, "why", why,
				"reason", reason, "node", node)
			reason += fmt.Sprintf("; lifecycle hook %s of %s completed before drain finished: %s", h.Hook, h.ASG, why)
			due = append(due, h)
		}
		if len(pending) > 0 {
			reason += fmt.Sprintf("; %d lifecycle hook(s) left pending", len(pending))
		}
	}
	var failed []string
	clog := log // completions name the node drained, a dry run's too
	if node != "" {
		clog = log.With("node", node)
	}
	for _, h := range due {
		if err := k.Complete(ctx, h, clog); err != nil {
			failed = append(failed, err.Error())
			pending = append(pending, h)
		}
	}
	if len(failed) > 0 {
		reason += "; " + strings.Join(failed, "; ")
	}
	return reason, pending, len(failed) > 0
}

// CompleteLast completes, without acting on the node, the hooks whose
// records are on their last delivery (the invocation has no time to act).
// It returns how many it completed, the completions that failed, and the
// hooks left pending (those too).
func (k *Keeper) CompleteLast(ctx context.Context, hooks []Hook, log *slog.Logger) (int, []string, []Hook) {
	completed, failed := 0, []string{}
	var pending []Hook
	for _, h := range hooks {
		if h.ReceiveCount < k.cfg.MaxReceiveCount {
			pending = append(pending, h)
			continue
		}
		log.Error("completing lifecycle hook without draining: no time to act on its last delivery",
			"asg", h.ASG, "hook", h.Hook, "receive_count", h.ReceiveCount)
		if err := k.Complete(ctx, h, log); err != nil {
			failed = append(failed, err.Error())
			pending = append(pending, h)
			continue
		}
		completed++
	}
	return completed, failed, pending
}
