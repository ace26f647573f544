package main

import (
	"context"
	"sync"
	"time"
)

// pacer hands out evictions at a steady rate, the most urgent waiter
// first: each tick grants the waiter of lowest rank (the earliest to ask
// among equals), or banks the grant, up to burst, when no one waits.
type pacer struct {
	mu      sync.Mutex
	banked  int
	burst   int
	seq     int
	waiting []*pacerWaiter
}

type pacerWaiter struct {
	rank, seq int
	granted   chan struct{}
}

// newPacer starts a pacer granting rate per second until ctx ends.
func newPacer(ctx context.Context, rate float64, burst int) *pacer {
	p := &pacer{burst: max(1, burst)}
	go func() {
		t := time.NewTicker(time.Duration(float64(time.Second) / max(rate, 0.1)))
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				p.tick()
			}
		}
	}()
	return p
}

// tick grants one eviction.
func (p *pacer) tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.waiting) == 0 {
		p.banked = min(p.burst, p.banked+1)
		return
	}
	best := 0
	for i, w := range p.waiting {
		if b := p.waiting[best]; w.rank < b.rank || (w.rank == b.rank && w.seq < b.seq) {
			best = i
		}
	}
	close(p.waiting[best].granted)
	p.waiting = append(p.waiting[:best], p.waiting[best+1:]...)
}

// ask queues a request of rank; the channel is closed when it is granted.
func (p *pacer) ask(rank int) *pacerWaiter {
	p.mu.Lock()
	defer p.mu.Unlock()
	w := &pacerWaiter{rank: rank, seq: p.seq, granted: make(chan struct{})}
	p.seq++
	if p.banked > 0 && len(p.waiting) == 0 {
		p.banked--
		close(w.granted)
		return w
	}
	p.waiting = append(p.waiting, w)
	return w
}

// forget drops a waiter that gave up.
func (p *pacer) forget(w *pacerWaiter) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, x := range p.waiting {
		if x == w {
			p.waiting = append(p.waiting[:i], p.waiting[i+1:]...)
			return
		}
	}
}

// wait blocks until a request of rank is granted or ctx ends.
func (p *pacer) wait(ctx context.Context, rank int) error {
	w := p.ask(rank)
	select {
	case <-w.granted:
		return nil
	case <-ctx.Done():
		p.forget(w)
		return ctx.Err()
	}
}
