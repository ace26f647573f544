package drain

import (
	"context"
	"slices"
	"sync"
	"time"
)

// seatTime sizes a Pace's seats: an instance keeps in flight at most what
// its share of the rate sends in this long. While the API server answers
// faster, the rate governs; once it answers slower (its priority level is
// full, its CPU is short), fewer requests go, at the pace it answers,
// instead of piling up in API Priority and Fairness queues until they are
// answered 429. All instances together then hold at most rate × seatTime
// seats (25 at the default 200 a second): under the 31 Drainpipe's level
// keeps while it lends half its 61 (deploy/flowcontrol.yaml).
const seatTime = 125 * time.Millisecond

// TurnEvent is the turn of a write that reports rather than acts (a
// Kubernetes event): it takes a seat after every eviction waiting.
const TurnEvent = turns

// seats bounds one instance's writes in flight; those waiting are served
// by turn (see turn), then in order.
type seats struct {
	mu      sync.Mutex
	free    int
	waiting [turns + 1][]chan struct{}
}

func newSeats(n int) *seats { return &seats{free: max(1, n)} }

// acquire returns once a seat is held, or with ctx's error.
func (s *seats) acquire(ctx context.Context, turn int) error {
	s.mu.Lock()
	if s.free > 0 {
		s.free--
		s.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	s.waiting[turn] = append(s.waiting[turn], ch)
	s.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		s.mu.Lock()
		defer s.mu.Unlock()
		select {
		case <-ch:
			// Handed a seat meanwhile: pass it on.
			s.releaseLocked()
		default:
			s.waiting[turn] = slices.DeleteFunc(s.waiting[turn], func(c chan struct{}) bool { return c == ch })
		}
		return ctx.Err()
	}
}

func (s *seats) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.releaseLocked()
}

// releaseLocked hands the seat to the first waiter by turn, or frees it.
func (s *seats) releaseLocked() {
	for t := range s.waiting {
		if len(s.waiting[t]) > 0 {
			close(s.waiting[t][0])
			s.waiting[t] = s.waiting[t][1:]
			return
		}
	}
	s.free++
}

// Seat holds one of the instance's seats for a write other than an
// eviction (turn TurnEvent: after the evictions waiting) and returns the
// function that gives it back. A nil Pace holds nothing.
func (p *Pace) Seat(ctx context.Context) (release func(), err error) {
	if p == nil {
		return func() {}, nil
	}
	if err := p.seats.acquire(ctx, TurnEvent); err != nil {
		return nil, err
	}
	return p.seats.release, nil
}
