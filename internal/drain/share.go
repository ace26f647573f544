package drain

import (
	"math"
	"time"
)

// share is the part of the cluster's eviction rate an instance sends,
// following demand without coordination between instances: the API
// server's answers are the only signal they share, and API Priority and
// Fairness arbitrates. It starts at the instance's fair share (the
// cluster's rate divided by the instances the event source may run),
// which it never goes below, and rises while answers come back fast, up to
// the cluster's whole rate, which one instance never exceeds; an
// overloaded answer (a 429 from API Priority and Fairness, a server
// error, a timeout) or a slow one (see slowAnswer) halves it. A lone
// drain, the common case, takes the cluster's rate at once (see crowd);
// concurrent drains, whose excess queues in the API server and slows
// every answer, settle near what it serves.
//
// Until its first overload, and again after a quiet spell, it rises by a
// whole fair share per fast answer (a slow start: the cluster's rate
// within rate/share answers); after an overload by a fair share per round
// of answers (as many as its seats), additive increase. One overload
// halves it once: answers to requests sent before a decrease belong to
// the same episode, as TCP counts one loss per window.
type share struct {
	floor, ceiling float64 // requests a second

	rate     float64
	probing  bool      // slow start
	calm     time.Time // when it last halved
	lastSeen time.Time // when an answer last came
	// crowded: other instances drain (see Pace.crowd); the share keeps
	// to the fair share.
	crowded bool
}

// slowAnswer is how long an answer may take before it counts as an
// overload. API Priority and Fairness queues a level's excess rather than
// refusing it at once, so answers that wait are the first sign of too
// many requests. An eviction takes tens of milliseconds on a server with
// time to spare, and over half a second when its budget's status is
// written concurrently (the API server retries the loser after 500 ms);
// three quarters of a second is neither. One threshold for all
// instances, not one relative to what each has seen, gives each the same
// signal, so their shares converge to equal ones (an instance that
// started while the queue was long would take a slow answer for normal).
const slowAnswer = 750 * time.Millisecond

// quietSpell is how long without an answer before a share probes again
// from where it stands, as fast as when it started: the drains it
// shared the API server with may be over.
const quietSpell = 5 * time.Second

func newShare(clusterRate float64, instances int) share {
	floor := clusterRate / float64(instances)
	return share{floor: floor, ceiling: clusterRate, rate: floor, probing: true}
}

// seats is how many requests the share keeps in flight (see seatTime).
func (s *share) seats() int { return seatsFor(s.rate) }

func seatsFor(rate float64) int { return max(2, int(math.Ceil(rate*seatTime.Seconds()))) }

// answered takes the answer at now to a request sent at sent, overloaded
// or not, and reports whether the rate changed.
func (s *share) answered(sent, now time.Time, overload bool) bool {
	if !s.lastSeen.IsZero() && now.Sub(s.lastSeen) >= quietSpell {
		s.probing = true
	}
	s.lastSeen = now
	if overload || now.Sub(sent) > slowAnswer {
		if sent.Before(s.calm) {
			return false // the episode already halved it
		}
		s.probing = false
		s.calm = now
		old := s.rate
		s.rate = max(s.floor, s.rate/2)
		return s.rate != old
	}
	ceiling := s.ceiling
	if s.crowded {
		ceiling = s.floor
	}
	if s.rate >= ceiling {
		return false
	}
	step := s.floor
	if !s.probing {
		step /= float64(s.seats())
	}
	s.rate = min(ceiling, s.rate+step)
	return true
}

// crowd sets whether other instances drain, and reports whether the rate
// changed: crowded, it drops to the fair share at once; alone while it
// probes (no overload since it started or since a quiet spell), it takes
// the cluster's whole rate at once, so a lone drain pays no slow start.
// A wave's instances that each find themselves alone before their
// cordons show rise no further than their slow start would take them
// within a few answers, and drop to the fair share at their next look.
func (s *share) crowd(crowded bool) bool {
	s.crowded = crowded
	switch {
	case crowded && s.rate > s.floor:
		s.rate = s.floor
		return true
	case !crowded && s.probing && s.rate < s.ceiling:
		s.rate = s.ceiling
		return true
	}
	return false
}
