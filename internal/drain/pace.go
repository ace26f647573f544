package drain

import (
	"context"
	"math"
	"sync"
	"time"
)

// Pace spaces a function instance's eviction requests to its share of
// the cluster's eviction rate: every instance the event source runs at
// once evicts at the cluster's rate divided by their number, so all of
// them together stay within what the control plane is meant to take
// (deploy/flowcontrol.yaml queues a burst; a sustained excess is answered
// 429 and starves the level's other tenants), and keeps no more of its
// writes in flight than its seats (see seatTime). When requests wait, those
// of drains racing a deadline (Spot, a scheduled event, a reservation's
// end) go before those of drains that can wait (a terminate hook), and
// within each, pods whose budget chains their evictions (see chained) go
// first. It is safe for concurrent use; nil paces nothing.
type Pace struct {
	every time.Duration // one request per every
	burst int
	clock paceClock
	// seats bound the evictions in flight, eventSeats the events (see
	// seatTime).
	seats, eventSeats *seats

	mu      sync.Mutex
	tat     time.Time // when the bucket would be full again (GCRA's theoretical arrival time)
	waiting turnQueue
}

// turns is the number of turns a Pace serves requests in.
const turns = 4

// turn is a request's place among those waiting: deadlines first, then
// budget-chained pods (the longest chains of replacement cycles start
// first, as the longest jobs do in a schedule).
func turn(urgent, chained bool) int {
	t := 0
	if !urgent {
		t += 2
	}
	if !chained {
		t++
	}
	return t
}

// paceClock is the time a Pace keeps: real, or a test's.
type paceClock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// NewPace paces a share of clusterRate (requests per second) among
// instances function instances: rate clusterRate/instances, with a burst
// of one second of it (at least one request), and seats for what that
// rate sends in seatTime (at least two). It returns nil, pacing nothing,
// for a rate of 0.
func NewPace(clusterRate float64, instances int) *Pace {
	return newPace(clusterRate, instances, realClock{})
}

func newPace(clusterRate float64, instances int, c paceClock) *Pace {
	if clusterRate <= 0 || instances <= 0 {
		return nil
	}
	rate := clusterRate / float64(instances)
	n := max(2, int(math.Ceil(rate*seatTime.Seconds())))
	return &Pace{
		every: time.Duration(float64(time.Second) / rate), burst: max(1, int(rate)), clock: c,
		seats: newSeats(n), eventSeats: newSeats(n),
	}
}

// Wait returns once the request may go, holding one of the instance's
// seats, with the function that gives it back; or with ctx's error. Of
// the requests waiting, urgent ones go first, then chained ones (see
// turn).
func (p *Pace) Wait(ctx context.Context, urgent, chained bool) (release func(), err error) {
	if p == nil {
		return func() {}, nil
	}
	prio := turn(urgent, chained)
	if err := p.token(ctx, prio); err != nil {
		return nil, err
	}
	if err := p.seats.acquire(ctx, prio); err != nil {
		return nil, err
	}
	return p.seats.release, nil
}

// token returns once the bucket grants the request of turn prio a token,
// or with ctx's error.
func (p *Pace) token(ctx context.Context, prio int) error {
	p.mu.Lock()
	granted := p.waiting.add(prio)
	next := p.serveLocked(p.clock.Now())
	p.mu.Unlock()
	for {
		var wake <-chan time.Time
		if !next.IsZero() {
			wake = p.clock.After(next.Sub(p.clock.Now()))
		}
		select {
		case <-granted:
			return nil
		case <-ctx.Done():
			p.mu.Lock()
			defer p.mu.Unlock()
			if p.waiting.leave(prio, granted) {
				return nil // granted meanwhile: the token is spent, use it
			}
			return ctx.Err()
		case <-wake:
		}
		p.mu.Lock()
		next = p.serveLocked(p.clock.Now())
		p.mu.Unlock()
	}
}

// serveLocked grants the tokens available at now to the waiters, urgent
// ones first (see turn), and returns when the next token frees (zero
// when none waits). p.mu must be held.
func (p *Pace) serveLocked(now time.Time) time.Time {
	for {
		if p.waiting.len() == 0 {
			return time.Time{}
		}
		tat := p.tat
		if tat.Before(now) {
			tat = now
		}
		// A token is free while the bucket is less than full: tat at most
		// burst-1 intervals ahead of now.
		if free := now.Add(time.Duration(p.burst-1) * p.every); tat.After(free) {
			return tat.Add(-time.Duration(p.burst-1) * p.every)
		}
		p.tat = tat.Add(p.every)
		p.waiting.serve()
	}
}
