package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"
)

// LastChance reports whether this attempt is the last one able to complete
// h in time, with why: the record that carried it is on its last delivery,
// or the action would pass its global timeout before the next one.
func (k *Keeper) LastChance(ctx context.Context, h Hook) (string, bool) {
	if h.ReceiveCount >= k.cfg.MaxReceiveCount {
		return fmt.Sprintf("last delivery (receive count %d, max %d)", h.ReceiveCount, k.cfg.MaxReceiveCount), true
	}
	end := k.d.Clock.Now()
	if dl, ok := ctx.Deadline(); ok {
		end = end.Add(time.Until(dl))
	}
	if maxAge := k.maxAge(ctx, h); !h.Time.IsZero() && end.Sub(h.Time) >= maxAge {
		return fmt.Sprintf("lifecycle action is %s old, near its global timeout (max hook age %s)",
			end.Sub(h.Time).Round(time.Second), maxAge), true
	}
	return "", false
}

// CompleteAttempts bounds the completion calls of one hook in one attempt,
// each with the SDK's own retries; the hook reserve bounds their time.
const CompleteAttempts = 3

// Complete sends CONTINUE for one lifecycle action, retrying within the
// context (the hook reserve) when Auto Scaling fails. Only a completion
// that was not already done counts as successful (duplicates find it done).
func (k *Keeper) Complete(ctx context.Context, h Hook, log *slog.Logger) error {
	log = log.With("asg", h.ASG, "hook", h.Hook)
	if k.cfg.DryRun {
		log.Info("dry run: would complete lifecycle hook")
		return nil
	}
	var err error
	for attempt := 1; ; attempt++ {
		var already bool
		already, err = k.d.Calls.Complete(ctx, h.Lifecycle)
		k.d.Record(OpComplete, h.Lifecycle, already, err)
		if err == nil {
			log.Info("completed lifecycle hook", "already_done", already, "attempts", attempt)
			return nil
		}
		if attempt == CompleteAttempts || ctx.Err() != nil {
			break
		}
		log.Warn("completing lifecycle hook failed; retrying", "attempt", attempt, "error", err)
		select {
		case <-time.After(time.Duration(attempt) * k.cfg.CompleteBackoff):
		case <-ctx.Done():
		}
	}
	return fmt.Errorf("completing lifecycle hook %s of %s: %w", h.Hook, h.ASG, err)
}

// heartbeat extends one hook's heartbeat timeout and reports whether the
// action is over. Other failures are logged, not fatal: the call may be
// throttled (the next one may pass), and completion tells the rest.
func (k *Keeper) heartbeat(ctx context.Context, h Hook) (inactive, failed bool) {
	if k.cfg.DryRun {
		return false, false
	}
	err := k.d.Calls.Heartbeat(ctx, h.Lifecycle)
	k.d.Record(OpHeartbeat, h.Lifecycle, false, err)
	if err == nil || ctx.Err() != nil {
		return false, false
	}
	if errors.Is(err, ErrInactive) { // completed by a duplicate, or timed out
		k.d.Log.Info("lifecycle hook no longer pending", "asg", h.ASG, "hook", h.Hook, "instance_id", h.InstanceID)
		return true, false
	}
	k.d.Log.Warn("heartbeating lifecycle hook", "asg", h.ASG, "hook", h.Hook, "instance_id", h.InstanceID, "error", err)
	return false, true
}

// heartbeatTimeout is the hook's heartbeat timeout, or 0 when unknown (no
// HookTimeouts, or the call failed: logged, the defaults then apply).
func (k *Keeper) heartbeatTimeout(ctx context.Context, h Hook) time.Duration {
	if k.timeouts == nil {
		return 0
	}
	d, err := k.timeouts.HeartbeatTimeout(ctx, h.ASG, h.Hook)
	if err != nil {
		k.d.Log.Warn("describing lifecycle hook; heartbeating at the cap", "asg", h.ASG, "hook", h.Hook,
			"cap", k.cfg.HeartbeatInterval, "error", err)
		return 0
	}
	return d
}

// cadence is how often h is heartbeated: a third of its heartbeat timeout,
// so two heartbeats may fail or come late before it expires, and never
// more than HeartbeatInterval.
func (k *Keeper) cadence(ctx context.Context, h Hook) time.Duration {
	every := k.cfg.HeartbeatInterval
	if hb := k.heartbeatTimeout(ctx, h); hb > 0 {
		every = min(every, hb/3)
	}
	return max(every, time.Second)
}

// maxAge is how old h's action may get before it is completed although
// its drain has not finished: its global timeout, min(100 × heartbeat
// timeout, 48 h), less a quarter of it (at most an hour) for the time
// until the next delivery; MaxHookAge when the timeout is unknown.
func (k *Keeper) maxAge(ctx context.Context, h Hook) time.Duration {
	hb := k.heartbeatTimeout(ctx, h)
	if hb <= 0 {
		return k.cfg.MaxHookAge
	}
	global := min(100*hb, MaxActionLife)
	return global - min(global/4, time.Hour)
}

// RetryWithin is how soon a message whose hooks are left pending must come
// back: nothing heartbeats them until the next delivery. Half the shortest
// heartbeat timeout leaves the other half for the time since the last
// heartbeat (at most a cadence, a third) and for the redelivery to be
// picked up and heartbeat first; whole seconds (SQS's unit), at least one.
// A timeout unknown counts as HeartbeatInterval, the cadence's own
// fallback, which is below the shortest timeout Auto Scaling allows.
func (k *Keeper) RetryWithin(ctx context.Context, hooks []Hook) time.Duration {
	if len(hooks) == 0 {
		return 0
	}
	each := make([]time.Duration, len(hooks))
	for i, h := range hooks {
		d := k.cfg.HeartbeatInterval
		if hb := k.heartbeatTimeout(ctx, h); hb > 0 {
			d = hb / 2
		}
		each[i] = max(d.Truncate(time.Second), time.Second)
	}
	return slices.Min(each)
}
