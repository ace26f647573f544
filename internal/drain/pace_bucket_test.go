package drain

import (
	"context"
	"runtime"
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

// A change of rate keeps the requests the bucket owes, not the time it
// owes: when the share rises, the tokens it adds are free at once (a lone
// drain's slow start does not pay its first requests at the fair share's
// interval), and when it is cut, the requests already sent count against
// the smaller bucket (a cut does not free a burst).
func TestPaceRateChangeKeepsTheRequestsOwed(t *testing.T) {
	t0 := time.Unix(1e9, 0)
	takeAll := func(p *Pace) int {
		n := 0
		for n < 1000 && take(p, t0, false) {
			n++
		}
		return n
	}

	up := newPace(200, 10, &fakeClock{now: t0}) // the fair share: 20 a second, a burst of 20
	if n := takeAll(up); n != 20 {
		t.Fatalf("fair share: %d requests at once, want its burst of 20", n)
	}
	setRate(up, 200)
	if n := takeAll(up); n != 180 {
		t.Errorf("risen to 200 a second with 20 requests sent: %d more at once, want 180 (a burst of 200 less the 20 owed)", n)
	}

	down := newPace(200, 1, &fakeClock{now: t0}) // a burst of 200
	for range 100 {
		if !take(down, t0, false) {
			t.Fatal("a request of the first 100 waited")
		}
	}
	setRate(down, 100)
	if n := takeAll(down); n != 0 {
		t.Errorf("cut to 100 a second with 100 requests sent: %d more at once, want none (the bucket of 100 is spent)", n)
	}
}

// A request waiting for a token looks again when the rate rises, not at
// the instant the old rate would have freed one: no timer of the test's
// clock ever fires, so only the rise can let it go.
func TestPaceWaiterGoesWhenTheRateRises(t *testing.T) {
	t0 := time.Unix(1e9, 0)
	p := newPace(200, 10, &fakeClock{now: t0})
	for range 20 {
		if !take(p, t0, false) {
			t.Fatal("a request of the burst waited")
		}
	}
	got := make(chan error, 1)
	go func() { got <- p.token(context.Background(), turn(Place{})) }()
	waitWaiting(t, p)
	setRate(p, 200)
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("token: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting request still waits after the rate rose to 200 a second with 20 requests owed")
	}
}

// setRate sets p's share to rate, as an answer or a look at the held
// nodes would.
func setRate(p *Pace, rate float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.share.rate = rate
	p.applyLocked()
}

// waitWaiting returns once a request waits in p's queue.
func waitWaiting(t *testing.T, p *Pace) {
	t.Helper()
	for {
		p.mu.Lock()
		n := p.waiting.len()
		p.mu.Unlock()
		if n > 0 {
			return
		}
		runtime.Gosched()
	}
}
