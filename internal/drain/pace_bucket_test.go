package drain

import (
	"testing"
	"time"
)

// A Pace's bucket holds one second of its rate: that many requests go at
// once, and the next when the first token frees, one interval later.
func TestPaceBurstThenOneEveryInterval(t *testing.T) {
	t0 := time.Unix(1e9, 0)
	p := newPace(10, 1, realClock{}) // a burst of 10, one token every 100 ms
	for i := range 10 {
		if !take(p, t0, false) {
			t.Fatalf("request %d of the burst of 10 waited", i+1)
		}
	}
	if take(p, t0, false) {
		t.Fatal("an 11th request went with the bucket empty")
	}
	p.mu.Lock()
	granted := p.waiting.add(turn(Place{}))
	next := p.serveLocked(t0)
	p.mu.Unlock()
	if want := t0.Add(100 * time.Millisecond); !next.Equal(want) {
		t.Errorf("the next token frees at %v, want %v (one interval on)", next.Sub(t0), want.Sub(t0))
	}
	p.mu.Lock()
	p.serveLocked(t0.Add(100 * time.Millisecond))
	p.mu.Unlock()
	select {
	case <-granted:
	default:
		t.Error("the waiting request did not get the token that freed")
	}
}

// No rate, or no instance to share it, paces nothing.
func TestPaceNoneWithoutARate(t *testing.T) {
	for _, c := range []struct {
		rate      float64
		instances int
	}{{0, 10}, {-1, 10}, {200, 0}, {200, -1}} {
		if p := newPace(c.rate, c.instances, realClock{}); p != nil {
			t.Errorf("rate %v over %d instances: a pace, want none", c.rate, c.instances)
		}
	}
}

// Turns go deadlines first, then by chain depth, deepest first (depths
// past the last told apart share it), then retries; a drain that can
// wait, however deep its chain, goes after every deadline's request,
// retries included.
func TestTurnsGoDeadlinesThenDepthThenRetries(t *testing.T) {
	order := []Place{
		{Urgent: true, Depth: depths - 1},
		{Urgent: true, Depth: 2},
		{Urgent: true, Depth: 1},
		{Urgent: true},
		{Urgent: true, Depth: depths - 1, Retry: true},
		{Depth: depths - 1},
		{Depth: 2},
		{Depth: 1},
		{},
		{Depth: depths - 1, Retry: true},
	}
	for i, at := range order {
		if got := turn(at); got < 0 || got >= turns {
			t.Errorf("%+v: turn %d, outside 0..%d", at, got, turns-1)
		}
		if i > 0 && turn(at) <= turn(order[i-1]) {
			t.Errorf("%+v: turn %d, not after %+v's %d", at, turn(at), order[i-1], turn(order[i-1]))
		}
	}
	for _, urgent := range []bool{true, false} {
		deepest := turn(Place{Urgent: urgent, Depth: depths - 1})
		for _, d := range []int{depths, depths + 1, 100} {
			if got := turn(Place{Urgent: urgent, Depth: d}); got != deepest {
				t.Errorf("urgent %v, depth %d: turn %d, want the deepest's %d", urgent, d, got, deepest)
			}
		}
	}
}
