package lifecycle

import (
	"context"
	"sync"
	"time"

	"github.com/drainpipe/drainpipe/internal/event"
)

// Keeper heartbeats the lifecycle actions of the tasks in progress, from
// the moment a batch is planned (Prepare) or a task starts, until the task
// settles them or the context they came with ends: one heartbeat at once,
// then one every cadence (a third of the hook's heartbeat timeout, at most
// KeeperConfig.HeartbeatInterval), queued tasks included. One goroutine
// serves all actions of one cadence. It also completes them, and tells
// when an attempt is a hook's last chance. It is safe for concurrent use.
type Keeper struct {
	cfg      KeeperConfig
	d        KeeperDeps
	timeouts Timeouts // nil when d.Calls cannot tell
	mu       sync.Mutex
	held     map[event.Lifecycle]*held
	groups   map[time.Duration]*beatGroup
}

// held is one action kept alive.
type held struct {
	h        Hook
	ctx      context.Context
	refs     int  // tasks holding it
	prepared int  // of which not yet taken by their Act
	inactive bool // a heartbeat answered that the action is over
	group    *beatGroup
	beaten   chan struct{} // closed once the first heartbeat is answered
}

// beatGroup heartbeats the actions of one cadence.
type beatGroup struct {
	every   time.Duration
	round   sync.Mutex // held while a round of heartbeats runs
	members map[event.Lifecycle]*held
	stop    chan struct{}
}

// Prepare holds the hooks of a planned task until its Act takes them. It
// returns once they are held; their first heartbeats follow after(ctx),
// so a batch's cordons need not wait for them (release does).
func (k *Keeper) Prepare(ctx context.Context, hooks []Hook, after func(context.Context)) {
	if fresh := k.register(ctx, hooks, true); len(fresh) > 0 {
		go func() {
			after(ctx)
			k.start(ctx, fresh, true)
		}()
	}
}

// Acquire holds a task's hooks for its Act: those prepared are taken over,
// the others heartbeated at once and kept alive.
func (k *Keeper) Acquire(ctx context.Context, hooks []Hook) {
	k.hold(ctx, hooks, false, true)
}

// hold keeps hooks alive; beatNow heartbeats fresh ones at once.
func (k *Keeper) hold(ctx context.Context, hooks []Hook, prepare, beatNow bool) {
	k.start(ctx, k.register(ctx, hooks, prepare), beatNow)
}

// register holds hooks and returns those held afresh.
func (k *Keeper) register(ctx context.Context, hooks []Hook, prepare bool) []*held {
	if len(hooks) == 0 || k.cfg.DryRun {
		return nil
	}
	var fresh []*held
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, h := range hooks {
		e, ok := k.held[h.Lifecycle]
		if !ok {
			e = &held{h: h, ctx: ctx, beaten: make(chan struct{})}
			k.held[h.Lifecycle] = e
			fresh = append(fresh, e)
		} else if !prepare && e.prepared > 0 {
			e.prepared-- // an Act takes over its prepared hold
			continue
		}
		e.refs++
		if prepare {
			e.prepared++
		}
	}
	return fresh
}

// start keeps fresh hooks alive and heartbeats each once (when beatNow).
func (k *Keeper) start(ctx context.Context, fresh []*held, beatNow bool) {
	for _, e := range fresh {
		every := k.cadence(ctx, e.h)
		k.mu.Lock()
		if k.held[e.h.Lifecycle] == e && e.group == nil {
			k.join(e, every)
		}
		k.mu.Unlock()
	}
	for _, e := range fresh {
		if beatNow {
			k.beat(e)
		}
		close(e.beaten)
	}
}

// Answered waits, until ctx ends, for the first heartbeat of each of hooks.
func (k *Keeper) Answered(ctx context.Context, hooks []Hook) {
	for _, h := range hooks {
		k.mu.Lock()
		e, ok := k.held[h.Lifecycle]
		k.mu.Unlock()
		if !ok {
			continue
		}
		select {
		case <-e.beaten:
		case <-ctx.Done():
			return
		}
	}
}

// Linger keeps the hooks a task left pending heartbeated until ctx (its
// batch's) ends: the batch may run on for minutes after the task, and
// nothing else heartbeats them until their record comes back. They were
// heartbeated at most a cadence ago, so the first heartbeat waits for the
// next tick: two cadences are two thirds of the heartbeat timeout.
func (k *Keeper) Linger(ctx context.Context, hooks []Hook) {
	if len(hooks) == 0 || k.cfg.DryRun || ctx.Err() != nil {
		return
	}
	k.hold(ctx, hooks, false, false)
	context.AfterFunc(ctx, func() { k.Release(hooks) })
}

// join adds e to the group of its cadence, starting the group if needed.
// k.mu must be held.
func (k *Keeper) join(e *held, every time.Duration) {
	g, ok := k.groups[every]
	if !ok {
		g = &beatGroup{every: every, members: map[event.Lifecycle]*held{}, stop: make(chan struct{})}
		k.groups[every] = g
		go func() { k.run(g, k.d.Clock.NewTicker(every)) }() // a clock is no call to make under k.mu
	}
	g.members[e.h.Lifecycle] = e
	e.group = g
}

// run heartbeats the group's members on every tick until the group empties.
func (k *Keeper) run(g *beatGroup, t Ticker) {
	defer t.Stop()
	for {
		select {
		case <-g.stop:
			return
		case <-t.C():
		}
		g.round.Lock()
		for _, e := range k.members(g) {
			k.beat(e)
		}
		g.round.Unlock()
	}
}

// members returns the group's live members, dropping those whose context
// ended (tasks never started, a batch given up).
func (k *Keeper) members(g *beatGroup) []*held {
	k.mu.Lock()
	defer k.mu.Unlock()
	var live []*held
	for _, e := range g.members {
		if e.ctx.Err() != nil {
			k.dropLocked(e)
			continue
		}
		live = append(live, e)
	}
	return live
}

// beat heartbeats one action and remembers whether it is over.
func (k *Keeper) beat(e *held) {
	inactive, failed := k.heartbeat(e.ctx, e.h)
	if failed && e.ctx.Err() == nil {
		// Its retries spent (throttling that outlasted them): try once
		// more now. Ticks are a third of the timeout apart, and a linger
		// waits a tick before its first beat: one lost beat could let the
		// action expire before the next.
		inactive, _ = k.heartbeat(e.ctx, e.h)
	}
	if inactive {
		k.mu.Lock()
		e.inactive = true
		k.mu.Unlock()
	}
}

// Inactive reports whether every one of hooks answered a heartbeat with
// "No active Lifecycle Action".
func (k *Keeper) Inactive(hooks []Hook) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, h := range hooks {
		if e, ok := k.held[h.Lifecycle]; !ok || !e.inactive {
			return false
		}
	}
	return len(hooks) > 0
}

// Release ends a task's hold on its hooks. It returns once no heartbeat of
// a released action is in flight, so none follows its completion.
func (k *Keeper) Release(hooks []Hook) {
	for _, h := range hooks {
		k.mu.Lock()
		e, ok := k.held[h.Lifecycle]
		var g *beatGroup
		if ok {
			g = e.group
		}
		k.mu.Unlock()
		if !ok {
			continue
		}
		<-e.beaten // its first heartbeat, in flight since Prepare, ends first
		k.mu.Lock()
		g = e.group
		k.mu.Unlock()
		if g != nil {
			g.round.Lock()
		}
		k.mu.Lock()
		if k.held[h.Lifecycle] == e {
			e.refs--
			if e.refs <= 0 {
				k.dropLocked(e)
			}
		}
		k.mu.Unlock()
		if g != nil {
			g.round.Unlock()
		}
	}
}

// dropLocked forgets e and stops its group when it empties. k.mu must be
// held.
func (k *Keeper) dropLocked(e *held) {
	if k.held[e.h.Lifecycle] == e {
		delete(k.held, e.h.Lifecycle)
	}
	g := e.group
	if g == nil {
		return
	}
	delete(g.members, e.h.Lifecycle)
	e.group = nil
	if len(g.members) == 0 && k.groups[g.every] == g {
		delete(k.groups, g.every)
		close(g.stop)
	}
}
