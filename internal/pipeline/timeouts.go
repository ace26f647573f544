package pipeline

import (
	"context"
	"time"

	"github.com/drainpipe/drainpipe/internal/handler"
)

// HookTimeouts tells a lifecycle hook's heartbeat timeout, from Auto
// Scaling's DescribeLifecycleHooks (cached by the implementation per group
// and hook). A Hooks that also implements it (*lifecycle.Client does) sets
// the heartbeat cadence and the global timeout of each hook.
type HookTimeouts interface {
	HeartbeatTimeout(ctx context.Context, asg, hook string) (time.Duration, error)
}

// maxGlobalTimeout is Auto Scaling's cap on a lifecycle action's life.
const maxGlobalTimeout = 48 * time.Hour

// heartbeatTimeout is the hook's heartbeat timeout, or 0 when unknown (no
// HookTimeouts, or the call failed: logged, the defaults then apply).
func (a *Actor) heartbeatTimeout(ctx context.Context, h hook) time.Duration {
	if a.timeouts == nil {
		return 0
	}
	d, err := a.timeouts.HeartbeatTimeout(ctx, h.ASG, h.Hook)
	if err != nil {
		a.log.Warn("describing lifecycle hook; heartbeating at the cap", "asg", h.ASG, "hook", h.Hook,
			"cap", a.cfg.HeartbeatInterval, "error", err)
		return 0
	}
	return d
}

// cadence is how often h is heartbeated: a third of its heartbeat timeout,
// so two heartbeats may fail or come late before it expires, and never
// more than HeartbeatInterval.
func (a *Actor) cadence(ctx context.Context, h hook) time.Duration {
	every := a.cfg.HeartbeatInterval
	if hb := a.heartbeatTimeout(ctx, h); hb > 0 {
		every = min(every, hb/3)
	}
	return max(every, time.Second)
}

// maxAge is how old h's action may get before it is completed although
// its drain has not finished: its global timeout, min(100 × heartbeat
// timeout, 48 h), less a quarter of it (at most an hour) for the time
// until the next delivery; MaxHookAge when the timeout is unknown.
func (a *Actor) maxAge(ctx context.Context, h hook) time.Duration {
	hb := a.heartbeatTimeout(ctx, h)
	if hb <= 0 {
		return a.cfg.MaxHookAge
	}
	global := min(100*hb, maxGlobalTimeout)
	return global - min(global/4, time.Hour)
}

// retryWithin is how soon a message whose hooks are left pending must come
// back: nothing heartbeats them until the next delivery. Half the shortest
// heartbeat timeout leaves the other half for the time since the last
// heartbeat (at most a cadence, a third) and for the redelivery to be
// picked up and heartbeat first; whole seconds (SQS's unit), at least one.
// A timeout unknown counts as HeartbeatInterval, the cadence's own
// fallback, which is below the shortest timeout Auto Scaling allows.
func (a *Actor) retryWithin(ctx context.Context, hooks []hook) time.Duration {
	var within time.Duration
	for _, h := range hooks {
		d := a.cfg.HeartbeatInterval
		if hb := a.heartbeatTimeout(ctx, h); hb > 0 {
			d = hb / 2
		}
		within = handler.SoonerWithin(within, max(d.Truncate(time.Second), time.Second))
	}
	return within
}

// beforeDeadline caps a retry's delay at a third of the time left before
// the task's nearest deadline still ahead (whole seconds, at least one):
// the backoff grows with each failed delivery, and without the cap a Spot
// warning retried through a short outage came back after its two minutes,
// when only a cordon is left to do. A third leaves room for two more
// tries; a tighter cap (a pending hook's) stays.
func beforeDeadline(t handler.Task, r handler.Result, now time.Time) handler.Result {
	if r.Status != handler.StatusRetry {
		return r
	}
	var nearest time.Time
	for _, in := range t.Interruptions {
		if in.Deadline.After(now) && (nearest.IsZero() || in.Deadline.Before(nearest)) {
			nearest = in.Deadline
		}
	}
	if nearest.IsZero() {
		return r
	}
	r.RetryWithin = handler.SoonerWithin(r.RetryWithin, max((nearest.Sub(now)/3).Truncate(time.Second), time.Second))
	return r
}
