package drain

import (
	"context"
	"slices"
	"sync"
	"time"
)

// seatTime sizes a Pace's seats: an instance keeps in flight at most the
// evictions its share of the rate sends in this long. While the API
// server answers faster, the rate governs; once it answers slower (its
// priority level is full, its CPU is short), fewer requests go, at the
// pace it answers, instead of piling up in API Priority and Fairness
// queues until they are answered 429. The Kubernetes events an instance
// writes have as many seats of their own, so a report neither waits
// behind the evictions (and times out) nor crowds them out. At the fair
// share every instance together holds at most 2 × rate × seatTime seats
// (60 at the default 200 a second, ten instances): the 61 of Drainpipe's
// level (deploy/flowcontrol.yaml), and a bounded queue while it lends
// half. Above the fair share an instance holds more only while answers
// stay fast (see share).
const seatTime = 125 * time.Millisecond

// turnQueue holds waiters by turn: the lowest turn is served first, each
// turn in order. Its user guards it.
type turnQueue [turns][]chan struct{}

// add queues a waiter of turn t; the channel closes when it is served.
func (q *turnQueue) add(t int) chan struct{} {
	ch := make(chan struct{})
	q[t] = append(q[t], ch)
	return ch
}

// len is how many wait.
func (q *turnQueue) len() int {
	n := 0
	for _, w := range q {
		n += len(w)
	}
	return n
}

// serve serves the first waiter by turn; false when none waits.
func (q *turnQueue) serve() bool {
	for t := range q {
		if len(q[t]) > 0 {
			close(q[t][0])
			q[t] = q[t][1:]
			return true
		}
	}
	return false
}

// leave takes ch, queued with turn t, out of the queue once its wait has
// ended otherwise, and reports whether it was served meanwhile (what it
// was given is then the caller's to use or pass on).
func (q *turnQueue) leave(t int, ch chan struct{}) (served bool) {
	select {
	case <-ch:
		return true
	default:
	}
	q[t] = slices.DeleteFunc(q[t], func(c chan struct{}) bool { return c == ch })
	return false
}

// seats bounds one instance's writes in flight to its limit, which
// follows the share; those waiting are served by turn (see turn), then in
// order.
type seats struct {
	mu          sync.Mutex
	limit, held int
	waiting     turnQueue
}

func newSeats(n int) *seats { return &seats{limit: max(1, n)} }

// acquire returns once a seat is held, or with ctx's error.
func (s *seats) acquire(ctx context.Context, turn int) error {
	s.mu.Lock()
	if s.held < s.limit {
		s.held++
		s.mu.Unlock()
		return nil
	}
	ch := s.waiting.add(turn)
	s.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.waiting.leave(turn, ch) {
			s.releaseLocked() // handed a seat meanwhile: pass it on
		}
		return ctx.Err()
	}
}

func (s *seats) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.releaseLocked()
}

func (s *seats) releaseLocked() {
	s.held--
	s.fillLocked()
}

// fillLocked hands the seats free to the first waiters by turn.
func (s *seats) fillLocked() {
	for s.held < s.limit && s.waiting.serve() {
		s.held++
	}
}

// setLimit resizes the seats; writes already in flight beyond a smaller
// limit finish, and no other goes until they have.
func (s *seats) setLimit(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limit = max(1, n)
	s.fillLocked()
}

// Seat holds one of the instance's seats for a Kubernetes event (see
// seatTime) and returns the function that gives it back. A nil Pace holds
// nothing.
func (p *Pace) Seat(ctx context.Context) (release func(), err error) {
	if p == nil {
		return func() {}, nil
	}
	if err := p.eventSeats.acquire(ctx, 0); err != nil {
		return nil, err
	}
	return p.eventSeats.release, nil
}
