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

// settleHooks completes the task's lifecycle hooks when its outcome is final,
// or, when the drain cannot finish in time (last delivery, or the action near
// its global timeout), completes them anyway and says so loudly. A failed
// completion turns the outcome into Retry.
func (a *Actor) settleHooks(ctx context.Context, t handler.Task, hooks []hook, r handler.Result, log *slog.Logger) handler.Result {
	if len(hooks) == 0 {
		return r
	}
	if r.Status == handler.StatusRetry {
		why, last := a.lastChance(ctx, t, hooks)
		if !last {
			r.Reason += "; lifecycle hook left pending"
			return r
		}
		log.Error("completing lifecycle hook before drain finished", "why", why, "reason", r.Reason, "node", r.Node)
		r.Reason += "; lifecycle hook completed before drain finished: " + why
	}
	var failed []string
	for _, h := range hooks {
		if err := a.complete(ctx, h, log); err != nil {
			failed = append(failed, err.Error())
		}
	}
	if len(failed) > 0 {
		r.Status = handler.StatusRetry
		r.Reason += "; " + strings.Join(failed, "; ")
	}
	return r
}

// lastChance reports whether this attempt is the last one able to complete
// the hooks in time, with why.
func (a *Actor) lastChance(ctx context.Context, t handler.Task, hooks []hook) (string, bool) {
	if t.ReceiveCount >= a.cfg.MaxReceiveCount {
		return fmt.Sprintf("last delivery (receive count %d, max %d)", t.ReceiveCount, a.cfg.MaxReceiveCount), true
	}
	end := a.clock.Now()
	if dl, ok := ctx.Deadline(); ok {
		end = end.Add(time.Until(dl))
	}
	for _, h := range hooks {
		if !h.Time.IsZero() && end.Sub(h.Time) >= a.cfg.MaxHookAge {
			return fmt.Sprintf("lifecycle action is %s old, near its global timeout (max hook age %s)",
				end.Sub(h.Time).Round(time.Second), a.cfg.MaxHookAge), true
		}
	}
	return "", false
}

// complete sends CONTINUE for one lifecycle action. Only a completion that
// was not already done counts as successful (duplicates find it done).
func (a *Actor) complete(ctx context.Context, h hook, log *slog.Logger) error {
	log = log.With("asg", h.ASG, "hook", h.Hook)
	if a.cfg.DryRun {
		log.Info("dry run: would complete lifecycle hook")
		return nil
	}
	already, err := a.hooks.Complete(ctx, h.Lifecycle)
	a.rec.RecordHook(HookComplete, h.Lifecycle, already, err)
	if err != nil {
		return fmt.Errorf("completing lifecycle hook %s of %s: %w", h.Hook, h.ASG, err)
	}
	log.Info("completed lifecycle hook", "already_done", already)
	return nil
}

// heartbeat extends every hook's heartbeat timeout. Failures are logged, not
// fatal: the hook may be gone (completion will tell) or the call throttled
// (the next one may pass).
func (a *Actor) heartbeat(ctx context.Context, hooks []hook, log *slog.Logger) {
	if a.cfg.DryRun {
		return
	}
	for _, h := range hooks {
		err := a.hooks.Heartbeat(ctx, h.Lifecycle)
		a.rec.RecordHook(HookHeartbeat, h.Lifecycle, false, err)
		switch {
		case err == nil || ctx.Err() != nil:
		case errors.Is(err, lifecycle.ErrInactive): // completed by a duplicate, or timed out
			log.Info("lifecycle hook no longer pending", "asg", h.ASG, "hook", h.Hook)
		default:
			log.Warn("heartbeating lifecycle hook", "asg", h.ASG, "hook", h.Hook, "error", err)
		}
	}
}

// keepAlive heartbeats the hooks every HeartbeatInterval until stop is
// called; stop returns once no heartbeat is in flight, so none follows the
// completion.
func (a *Actor) keepAlive(ctx context.Context, hooks []hook, log *slog.Logger) (stop func()) {
	if len(hooks) == 0 || a.cfg.DryRun {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	ticker := a.clock.NewTicker(a.cfg.HeartbeatInterval)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		defer ticker.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C():
				a.heartbeat(ctx, hooks, log)
			}
		}
	}()
	return func() {
		cancel()
		<-finished
	}
}

// isNotFound reports a Kubernetes NotFound anywhere in err's chain.
func isNotFound(err error) bool {
	return apierrors.IsNotFound(err)
}
