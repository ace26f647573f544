package pipeline

import (
	"context"
	"sync"
	"time"
)

// cordonFirstWait is the longest a task's evictions wait for the rest of
// its batch to cordon. Cordons take tens of milliseconds each, all at
// once; a task slow to reach its cordon (a retried read, a new cluster's
// first token) must not hold the others' drains for long.
const cordonFirstWait = time.Second

// cordonLead is how long after its batch was prepared a drain may start
// evicting, at the earliest. A wave's notices arrive together and start
// several environments within a fraction of a second; each cordons its
// batch in a few hundred milliseconds on a quiet API server. Evictions
// fired sooner load the API server while the other environments' cordons
// are on their way (in the 200-node wave those took up to 2 s then), and
// their replacements may be scheduled onto nodes of the wave not yet
// cordoned, to be moved again.
const cordonLead = time.Second

// batchGate holds a batch's evictions until every task of the batch has
// cordoned its node or ended, and cordonLead has passed since the batch
// was prepared: an environment's first drains used to fire their
// evictions while its last cordons were on their way, and those cordons
// then waited behind them (seconds, in the 200-node wave).
type batchGate struct {
	mu     sync.Mutex
	left   map[string]bool // instances yet to cordon or end
	all    chan struct{}   // closed once none is left
	opened time.Time
}

func newBatchGate(ids []string, now time.Time) *batchGate {
	g := &batchGate{left: map[string]bool{}, all: make(chan struct{}), opened: now}
	for _, id := range ids {
		g.left[id] = true
	}
	if len(g.left) == 0 {
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
		close(g.all)
	}
}

// gates maps each prepared instance to its batch's gate.
type gates struct {
	mu sync.Mutex
	of map[string]*batchGate
}

// open starts a gate for a batch's instances, at now.
func (gs *gates) open(ids []string, now time.Time) {
	if len(ids) < 2 {
		return // a lone task is no wave: it waits for nobody
	}
	g := newBatchGate(ids, now)
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if gs.of == nil {
		gs.of = map[string]*batchGate{}
	}
	for _, id := range ids {
		gs.of[id] = g
	}
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
// cordoned, then waits for the rest of the batch (cordonFirstWait at
// most) and until the Actor's lead has passed since the batch was
// prepared, or until ctx ends. Nil without a gate.
func (a *Actor) afterCordon(id string) func(context.Context) {
	g := a.gates.get(id)
	if g == nil {
		return nil
	}
	return func(ctx context.Context) {
		g.arrive(id)
		select {
		case <-g.all:
		default:
			a.wait(ctx, "batch", cordonFirstWait, g.all)
		}
		if rest := g.opened.Add(a.lead).Sub(a.clock.Now()); rest > 0 {
			a.wait(ctx, "lead", rest, nil)
		}
	}
}

// wait waits for done, d on the Actor's clock, or ctx, whichever is first.
func (a *Actor) wait(ctx context.Context, what string, d time.Duration, done <-chan struct{}) {
	t := a.clock.NewTicker(d)
	defer t.Stop()
	if a.parked != nil {
		a.parked(what)
	}
	select {
	case <-done:
	case <-t.C():
	case <-ctx.Done():
	}
}
