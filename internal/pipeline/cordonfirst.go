package pipeline

import (
	"context"
	"sync"
	"time"

	"github.com/drainpipe/drainpipe/internal/handler"
)

// cordonFirstWait is the longest a task's evictions wait for the rest of
// its batch to cordon. Cordons take tens of milliseconds each, all at
// once; a task slow to reach its cordon (a retried read, a new cluster's
// first token) must not hold the others' drains for long.
const cordonFirstWait = time.Second

// waveHold is how long a wave's drains wait, once their batch is
// cordoned, before their first eviction (and the event announcing them).
// A wave's environments start within a tenth of a second of each other
// and cordon over the next few tenths; a batch evicting the moment its
// own nodes were cordoned put its pod lists, evictions and events on the
// API server beside the other batches' cordons, and delayed them
// (docs/performance.md#why-the-constants-are-what-they-are). A quarter of
// a second is under 1% of such a drain, and never applies to a
// redelivery.
const waveHold = 250 * time.Millisecond

// batchGate holds a batch's evictions until every task of the batch has
// cordoned its node or ended: an environment's first drains used to fire
// their evictions while its last cordons were on their way, and those
// cordons then waited behind them. No
// replacement of an evicted pod lands on a node of the batch meanwhile.
// A wave's batch (first deliveries only) holds them waveHold longer.
type batchGate struct {
	mu    sync.Mutex
	left  map[string]bool // instances yet to cordon or end
	all   chan struct{}   // closed once none is left
	allAt time.Time       // when all was closed
	wave  bool            // every task on its first delivery: hold after all
}

func newBatchGate(ids []string) *batchGate {
	g := &batchGate{left: map[string]bool{}, all: make(chan struct{})}
	for _, id := range ids {
		g.left[id] = true
	}
	if len(g.left) == 0 {
		g.allAt = time.Now()
		close(g.all)
	}
	return g
}

// arrive says id has cordoned or ended; again is a no-op.
func (g *batchGate) arrive(id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.left[id] {
		return
	}
	delete(g.left, id)
	if len(g.left) == 0 {
		g.allAt = time.Now()
		close(g.all)
	}
}

// cordonedAt is when the batch's last node was cordoned (or its task
// ended), and whether that has happened.
func (g *batchGate) cordonedAt() (time.Time, bool) {
	select {
	case <-g.all:
	default:
		return time.Time{}, false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.allAt, true
}

// gates maps each prepared instance to its batch's gate.
type gates struct {
	mu sync.Mutex
	of map[string]*batchGate
}

// open starts a gate for a batch's instances and returns it; nil for
// fewer than two. wave: the batch's tasks are all first deliveries.
func (gs *gates) open(ids []string, wave bool) *batchGate {
	if len(ids) < 2 {
		return nil // a lone task waits for nobody
	}
	g := newBatchGate(ids)
	g.wave = wave
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if gs.of == nil {
		gs.of = map[string]*batchGate{}
	}
	for _, id := range ids {
		gs.of[id] = g
	}
	return g
}

// get returns id's gate, nil when it has none.
func (gs *gates) get(id string) *batchGate {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	return gs.of[id]
}

// leave says id's task has ended, and forgets its gate.
func (gs *gates) leave(id string) {
	gs.mu.Lock()
	g := gs.of[id]
	delete(gs.of, id)
	gs.mu.Unlock()
	if g != nil {
		g.arrive(id)
	}
}

// afterCordon is the drain request's AfterCordon for id: it says id has
// cordoned, then waits for the rest of the batch, cordonFirstWait at most,
// or until ctx ends, then for the batch to decide whether it gives way
// (handOff); a wave's batch then holds until waveHold after its last
// cordon (a.waveWait). Without a gate it only hands off.
func (a *Actor) afterCordon(id string) func(context.Context) {
	g := a.gates.get(id)
	if g == nil {
		return func(ctx context.Context) { handOff(ctx, handler.Cordoned(ctx)) }
	}
	return func(ctx context.Context) {
		g.arrive(id)
		decided := handler.Cordoned(ctx)
		defer func() {
			handOff(ctx, decided)
			if at, ok := g.cordonedAt(); ok && g.wave {
				a.waveWait(ctx, at.Add(waveHold))
			}
		}()
		select {
		case <-g.all:
			return
		default:
		}
		t := a.clock.NewTicker(cordonFirstWait)
		defer t.Stop()
		if a.parked != nil {
			a.parked()
		}
		g.wait(ctx, t.C())
	}
}

// wait returns once every node of the batch is cordoned (or its task has
// ended), at timeout, or when ctx ends.
func (g *batchGate) wait(ctx context.Context, timeout <-chan time.Time) {
	select {
	case <-g.all:
	case <-timeout:
	case <-ctx.Done():
	}
}

// handOff waits, cordonFirstWait at most, until the task's batch has
// decided whether it gives way to messages waiting in its queue (decided,
// from handler.Cordoned): when it does, ctx ends before any eviction, and
// the drain starts on the record's redelivery instead of being cut short
// in the middle. The bound is in real time: a batch whose other tasks
// never cordon (a launch waiting for its node) decides only later.
func handOff(ctx context.Context, decided <-chan struct{}) {
	select {
	case <-decided:
		return
	default:
	}
	t := time.NewTimer(cordonFirstWait)
	defer t.Stop()
	select {
	case <-decided:
	case <-t.C:
	case <-ctx.Done():
	}
}

// holdUntil waits until t or ctx's end, in real time: like
// cordonFirstWait it only delays evictions, it decides nothing.
func holdUntil(ctx context.Context, t time.Time) {
	d := time.Until(t)
	if d <= 0 {
		return
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
	}
}
