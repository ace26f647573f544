package handler

import (
	"context"
	"sync"
)

// handoff is what a batch that may give way knows of its tasks: which
// have cordoned their node or ended (ready once all have), and whether the
// batch has asked the queue yet (decided).
type handoff struct {
	mu      sync.Mutex
	settled []bool
	left    int
	ready   chan struct{} // closed once every task has cordoned or ended
	decided chan struct{} // closed once the batch first asked the queue
	once    sync.Once
}

func newHandoff(n int) *handoff {
	h := &handoff{settled: make([]bool, n), left: n, ready: make(chan struct{}), decided: make(chan struct{})}
	if n == 0 {
		close(h.ready)
	}
	return h
}

// settle says task i has cordoned its node or ended; again is a no-op.
func (h *handoff) settle(i int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.settled[i] {
		return
	}
	h.settled[i] = true
	if h.left--; h.left == 0 {
		close(h.ready)
	}
}

// decide says the batch has asked the queue (or will not): the drains
// waiting on Cordoned go on, or stop if it gave way.
func (h *handoff) decide() { h.once.Do(func() { close(h.decided) }) }

type cordonedKey struct{}

type cordonedMark struct {
	h *handoff
	i int
}

// closed is the answer of Cordoned outside a batch that may give way.
var closed = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// Cordoned says the task's node is cordoned: what is left of it (the
// drain) may wait for a redelivery. It returns a channel closed once the
// task's batch has decided whether it gives way: a drain evicts only after
// it, so a batch about to give way cuts no eviction short (the task's
// Yielding context has ended by then when it did). Outside a batch that
// may give way the channel is closed already.
func Cordoned(ctx context.Context) <-chan struct{} {
	m, ok := ctx.Value(cordonedKey{}).(cordonedMark)
	if !ok {
		return closed
	}
	m.h.settle(m.i)
	return m.h.decided
}

// withCordoned returns the context of task i of a batch that may give way.
func withCordoned(ctx context.Context, h *handoff, i int) context.Context {
	return context.WithValue(ctx, cordonedKey{}, cordonedMark{h, i})
}
