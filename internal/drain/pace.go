package drain

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Pace spaces a function instance's eviction requests to its share of
// the cluster's eviction rate, a share that follows demand (see share):
// a lone drain sends at the cluster's whole rate, concurrent ones back off
// as the API server's answers slow, and none sends less than the cluster's
// rate divided by the instances the event source may run. It also keeps
// no more of its writes in flight than its seats (see seatTime). When
// requests wait, they go by turn (see Place). It is safe for concurrent
// use; nil paces nothing.
type Pace struct {
	clock paceClock
	// seats bound the evictions in flight, eventSeats the events (see
	// seatTime).
	seats, eventSeats *seats
	// chains counts the budgets' pods of every drain the instance runs
	// (see Place.Depth).
	chains waveChains
	// deadlines: the wave's deadlines at risk, which the instance's
	// drains without one yield to (see yieldHorizon).
	deadlines deadlines

	mu      sync.Mutex
	nodes   map[string]int // the nodes the instance drains now
	share   share
	every   time.Duration // one request per every
	burst   int
	tat     time.Time // when the bucket would be full again (GCRA's theoretical arrival time)
	waiting turnQueue
	// changed closes when the rate changes: the waiters, asleep until
	// the token the old rate would free, look again.
	changed chan struct{}
}

// Place is a request's standing when requests wait.
type Place struct {
	// Urgent: its drain races a deadline (Spot, a scheduled event, a
	// reservation's end); those go before drains that can wait.
	Urgent bool
	// Depth: how many replacement cycles past the first its budget must
	// go through to let the wave's pods under it go (see chainDepth): 0
	// when the budget lets them all go at once. Deeper chains start
	// first, as the longest jobs do in a schedule.
	Depth int
	// Retry: a budget refused its last eviction. It waits behind every
	// first attempt of its deadline class: a pod that can go now is not
	// held up by one its budget is likely to refuse again.
	Retry bool
}

// depths is how many chain depths turns tell apart: deeper ones share
// the last.
const depths = 4

// turns is the number of turns a Pace serves requests in: per deadline
// class, each depth and the retries.
const turns = 2 * (depths + 1)

// turn is a Place's turn, the lowest served first: deadlines first, then
// by chain depth, deepest first, then retries.
func turn(p Place) int {
	t := 0
	if !p.Urgent {
		t = depths + 1
	}
	if p.Retry {
		return t + depths
	}
	return t + depths - 1 - min(max(p.Depth, 0), depths-1)
}

// paceClock is the time a Pace keeps: real, or a test's.
type paceClock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// NewPace paces one instance's share of clusterRate (requests per
// second) when the event source runs up to instances of them: from
// clusterRate/instances up to clusterRate as the API server's answers
// allow (see share), with a burst of one second of the current rate (at
// least one request) and seats for what it sends in seatTime (at least
// two). It returns nil, pacing nothing, for a rate of 0.
func NewPace(clusterRate float64, instances int) *Pace {
	return newPace(clusterRate, instances, realClock{})
}

func newPace(clusterRate float64, instances int, c paceClock) *Pace {
	if clusterRate <= 0 || instances <= 0 {
		return nil
	}
	sh := newShare(clusterRate, instances)
	p := &Pace{clock: c, share: sh, seats: newSeats(sh.seats()), eventSeats: newSeats(sh.seats())}
	p.applyLocked()
	return p
}

// waveChains is the count of budgets' pods the instance's drains share; a
// nil Pace's drains each have their own.
func (p *Pace) waveChains() *waveChains {
	if p == nil {
		return &waveChains{}
	}
	return &p.chains
}

// drainingNode counts node among the instance's drains until the returned
// function is called.
func (p *Pace) drainingNode(node string) (done func()) {
	if p == nil {
		return func() {}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.nodes == nil {
		p.nodes = map[string]int{}
	}
	p.nodes[node]++
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.nodes[node]--; p.nodes[node] <= 0 {
			delete(p.nodes, node)
		}
	}
}

// draining reports whether the instance drains node.
func (p *Pace) draining(node string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.nodes[node] > 0
}

// crowd says whether other instances' drains are under way: while they
// are, the share keeps to the fair share, so that the instances together
// keep to the cluster's rate (see share.crowded).
func (p *Pace) crowd(crowded bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.share.crowd(crowded) {
		p.applyLocked()
	}
}

// applyLocked sets the bucket and the seats to the share's rate. p.mu
// must be held.
func (p *Pace) applyLocked() {
	rate := p.share.rate
	every := time.Duration(float64(time.Second) / rate)
	// The bucket keeps the requests it owes, not the time: at the old
	// interval, tat-now was that many requests, and they take the new
	// interval each. A rise frees its extra tokens at once; a cut does
	// not free a burst.
	if now := p.clock.Now(); p.every > 0 && p.tat.After(now) {
		p.tat = now.Add(time.Duration(float64(p.tat.Sub(now)) * float64(every) / float64(p.every)))
	}
	p.every = every
	if p.changed != nil {
		close(p.changed)
	}
	p.changed = make(chan struct{})
	p.burst = max(1, int(rate))
	p.seats.setLimit(p.share.seats())
	p.eventSeats.setLimit(p.share.seats())
}

// Wait returns once the request may go, holding one of the instance's
// seats, with the function to call with the request's answer (nil or its
// error), which gives the seat back and adjusts the share; or with ctx's
// error. Of the requests waiting, the first by turn goes first (see
// Place).
func (p *Pace) Wait(ctx context.Context, at Place) (done func(error), err error) {
	if p == nil {
		return func(error) {}, nil
	}
	prio := turn(at)
	if err := p.token(ctx, prio); err != nil {
		return nil, err
	}
	if err := p.seats.acquire(ctx, prio); err != nil {
		return nil, err
	}
	sent := p.clock.Now()
	return func(err error) {
		p.answered(sent, err)
		p.seats.release()
	}, nil
}

// answered adjusts the share to the answer, sent at sent, err.
func (p *Pace) answered(sent time.Time, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.share.answered(sent, p.clock.Now(), overloaded(err)) {
		p.applyLocked()
	}
}

// overloaded reports whether an answer says the API server has more than
// it can take: API Priority and Fairness' 429, a server error or timeout,
// no answer. A budget's refusal (also a 429) is an answer like any other,
// and a request the drain itself cancelled says nothing of the server.
func overloaded(err error) bool {
	return err != nil && !errors.Is(err, context.Canceled) && classify(err) == outRetry
}

// token returns once the bucket grants the request of turn prio a token,
// or with ctx's error.
func (p *Pace) token(ctx context.Context, prio int) error {
	p.mu.Lock()
	granted := p.waiting.add(prio)
	next, changed := p.serveLocked(p.clock.Now()), p.changed
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
		case <-changed:
		}
		p.mu.Lock()
		next, changed = p.serveLocked(p.clock.Now()), p.changed
		p.mu.Unlock()
	}
}

// serveLocked grants the tokens available at now to the waiters, by turn, and returns when the next token frees (zero
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

// Crowded reports whether the instance drains alongside others: more
// than one node of its own at once (a batch's), or other instances'
// drains under way when it last looked (see crowd); false for nil.
func (p *Pace) Crowded() bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.share.crowded || len(p.nodes) > 1
}
