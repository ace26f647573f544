package pipeline

import (
	"context"
	"sync"
	"time"

	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/hold"
)

// LifeReader says how long a terminate lifecycle action of a group can
// last (every terminating hook's global timeout); *lifecycle.Client fits.
type LifeReader interface {
	ActionLife(ctx context.Context, asg string, names []string) (time.Duration, error)
}

// lives keeps each group's action life as first read by this environment.
type lives struct {
	mu sync.Mutex
	by map[string]time.Duration
}

// recordLife sets, on a redelivery, the end of each terminate action's
// hold: its start plus the longest the action can last as first read, so
// the sweep never gives the node back before it, even if the hooks'
// timeout is lowered while the action is pending. A first delivery does
// not wait for the read (its cordon is not held up); an action that
// outlives its first delivery is redelivered and records it then.
func (a *Actor) recordLife(ctx context.Context, t handler.Task, holds []hold.Hold) {
	r, ok := a.hooks.(LifeReader)
	if !ok || t.ReceiveCount <= 1 {
		return
	}
	for _, in := range t.Interruptions {
		if in.Kind != event.KindASGLifecycle || in.Lifecycle == nil || in.Time.IsZero() {
			continue
		}
		if d, ok := a.life(ctx, r, in.Lifecycle.ASG); ok {
			for j := range holds {
				if holds[j].ID == in.Lifecycle.Token && holds[j].Kind == string(in.Kind) {
					holds[j].End = hold.Stamp(in.Time.Add(d))
				}
			}
		}
	}
}

// life is the group's action life, read once per environment; ok is
// false when it cannot be read (the sweep then reads it itself).
func (a *Actor) life(ctx context.Context, r LifeReader, asg string) (time.Duration, bool) {
	a.lives.mu.Lock()
	d, ok := a.lives.by[asg]
	a.lives.mu.Unlock()
	if ok {
		return d, true
	}
	d, err := r.ActionLife(ctx, asg, nil)
	if err != nil {
		a.log.Debug("reading the lifecycle action's life", "asg", asg, "error", err.Error())
		return 0, false
	}
	a.lives.mu.Lock()
	if a.lives.by == nil {
		a.lives.by = map[string]time.Duration{}
	}
	a.lives.by[asg] = d
	a.lives.mu.Unlock()
	return d, true
}
