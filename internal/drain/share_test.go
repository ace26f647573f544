package drain

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// fakeClock is a Pace's clock that moves only when a test moves it.
type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time { return c.now }

// After never fires: the tests drive a Pace with take, never Wait.
func (c *fakeClock) After(time.Duration) <-chan time.Time { return nil }

// trySeat holds one of s's seats if one is free.
func trySeat(s *seats) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held >= s.limit {
		return false
	}
	s.held++
	return true
}

// server models an API server for a simulation: it answers requests one
// after another at its capacity, each after a fixed latency once served,
// so that what it is sent beyond its capacity waits in its queue (as API
// Priority and Fairness queues a level's excess).
type server struct {
	perRequest, latency time.Duration
	free                time.Time // when it is next free
}

// answerAt is when a request sent at sent is answered.
func (s *server) answerAt(sent time.Time) time.Time {
	start := s.free
	if sent.After(start) {
		start = sent
	}
	s.free = start.Add(s.perRequest)
	return s.free.Add(s.latency)
}

type sim struct {
	clock *fakeClock
	paces []*Pace
	srv   *server
	// inflight: per Pace, the send times and answer times of its requests.
	inflight [][][2]time.Time
	sent     []int
	waits    []time.Duration // how long each answered request took
}

func newSim(rate float64, instances, running int, srv *server) *sim {
	s := &sim{clock: &fakeClock{now: time.Unix(1e9, 0)}, srv: srv}
	for range running {
		s.paces = append(s.paces, newPace(rate, instances, s.clock))
	}
	s.inflight = make([][][2]time.Time, running)
	s.sent = make([]int, running)
	return s
}

// run drives every Pace as fast as it lets requests go for d, in steps
// of a millisecond, and returns the requests sent per Pace meanwhile.
func (s *sim) run(d time.Duration) []int {
	from := append([]int(nil), s.sent...)
	for end := s.clock.now.Add(d); s.clock.now.Before(end); s.clock.now = s.clock.now.Add(time.Millisecond) {
		now := s.clock.now
		for i, p := range s.paces {
			left := s.inflight[i][:0]
			for _, r := range s.inflight[i] {
				if r[1].After(now) {
					left = append(left, r)
					continue
				}
				s.waits = append(s.waits, r[1].Sub(r[0]))
				p.answered(r[0], nil)
				p.seats.release()
			}
			s.inflight[i] = left
			for trySeat(p.seats) {
				if !take(p, now, true) {
					p.seats.release()
					break
				}
				s.inflight[i] = append(s.inflight[i], [2]time.Time{now, s.srv.answerAt(now)})
				s.sent[i]++
			}
		}
	}
	out := make([]int, len(s.sent))
	for i := range s.sent {
		out[i] = s.sent[i] - from[i]
	}
	return out
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

// A lone drain, the common case, sends at the cluster's whole rate once
// the API server has answered a few of its requests fast, not at the
// share of one instance among all the event source may run.
func TestPaceLoneDrainTakesTheClusterRate(t *testing.T) {
	s := newSim(200, 10, 1, &server{perRequest: time.Millisecond, latency: 10 * time.Millisecond})
	s.run(100 * time.Millisecond) // the first answers
	got := s.run(10 * time.Second)[0]
	if got < 1900 {
		t.Errorf("a lone drain sent %d requests in 10 s, want about 2000 (the cluster's 200 a second)", got)
	}
	if most := 200*10 + 200; got > most {
		t.Errorf("a lone drain sent %d requests in 10 s, more than the cluster's rate allows (%d)", got, most)
	}
	if r := s.paces[0].share.rate; r > 200 {
		t.Errorf("one instance's rate rose to %.0f, past the cluster's 200", r)
	}
	if n := s.paces[0].seats.limit; n != 25 {
		t.Errorf("a lone drain at the cluster's rate keeps %d seats, want 25 (200 a second over 125 ms)", n)
	}
}

// Drains running at once share what the API server serves: when they ask
// more, its answers slow and each halves its share, so its queue stays
// under a second while it is kept busy, and the shares are about equal.
func TestPaceDrainsShareWhatTheServerServes(t *testing.T) {
	// The server serves 200 requests a second, the cluster's rate.
	s := newSim(200, 10, 10, &server{perRequest: 5 * time.Millisecond, latency: 10 * time.Millisecond})
	s.run(10 * time.Second)
	s.waits = nil
	got := s.run(20 * time.Second)
	total := sum(got)
	if total < 3600 {
		t.Errorf("ten drains sent %d requests in 20 s to a server of 200 a second: it idled", total)
	}
	for i, n := range got {
		if n < total/len(got)*3/4 {
			t.Errorf("drain %d sent %d of %d requests in 20 s: not a fair share", i, n, total)
		}
	}
	slow := 0
	for _, w := range s.waits {
		if w > time.Second {
			slow++
		}
	}
	if slow > len(s.waits)/100 {
		t.Errorf("%d of %d answers took over a second: the drains kept the server's queue long", slow, len(s.waits))
	}
}

// One overload halves the share once, however many answers it spoils; a
// slow answer counts as one; the share never drops below the fair share,
// and after a quiet spell it probes again as fast as at first.
func TestShareHalvesOncePerOverload(t *testing.T) {
	t0 := time.Unix(1e9, 0)
	s := newShare(200, 10)
	at := t0
	fast := func() {
		s.answered(at, at.Add(10*time.Millisecond), false)
		at = at.Add(10 * time.Millisecond)
	}
	for range 9 {
		fast()
	}
	if s.rate != 200 {
		t.Fatalf("after nine fast answers the share is %.0f, want the cluster's 200", s.rate)
	}
	sentBefore := at
	at = at.Add(time.Second)
	s.answered(sentBefore, at, true)
	if s.rate != 100 {
		t.Fatalf("after a 429 the share is %.0f, want 100", s.rate)
	}
	s.answered(sentBefore, at, true)
	if s.rate != 100 {
		t.Errorf("a second 429 of the same episode halved the share again: %.0f", s.rate)
	}
	sent := at.Add(time.Millisecond)
	at = sent.Add(slowAnswer + time.Millisecond)
	s.answered(sent, at, false)
	if s.rate != 50 {
		t.Errorf("after a slow answer the share is %.0f, want 50", s.rate)
	}
	for range 5 {
		sent = at.Add(time.Millisecond)
		at = sent.Add(time.Second)
		s.answered(sent, at, true)
	}
	if s.rate != 20 {
		t.Errorf("after overload upon overload the share is %.0f, want the fair share of 20", s.rate)
	}
	fast()
	if s.rate >= 40 {
		t.Errorf("after an overload the share rose by %.0f on one answer: not additive", s.rate-20)
	}
	at = at.Add(quietSpell)
	fast()
	fast()
	if s.rate < 60 {
		t.Errorf("after a quiet spell the share rose only to %.0f on two answers", s.rate)
	}
}

// What halves a share: API Priority and Fairness' 429, a server error, a
// timeout; not a budget's refusal (a 429 too), nor a request the drain
// cancelled itself.
func TestOverloaded(t *testing.T) {
	gr := schema.GroupResource{Resource: "pods"}
	budget := apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 10)
	budget.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: policyv1.DisruptionBudgetCause}}
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"accepted", nil, false},
		{"APF 429", apierrors.NewTooManyRequests("too many requests", 1), true},
		{"server error", apierrors.NewInternalError(errors.New("etcd")), true},
		{"timeout", context.DeadlineExceeded, true},
		{"budget refusal", budget, false},
		{"gone", apierrors.NewNotFound(gr, "web"), false},
		{"cancelled by the drain", fmt.Errorf("post: %w", context.Canceled), false},
	} {
		if got := overloaded(c.err); got != c.want {
			t.Errorf("%s: overloaded %v, want %v", c.name, got, c.want)
		}
	}
}

// A share reports whether its rate changed, so that the Pace resizes its
// bucket and seats only then; an answer of exactly slowAnswer is not slow,
// and an answer exactly quietSpell after the last probes again.
func TestShareReportsWhetherTheRateChanged(t *testing.T) {
	t0 := time.Unix(1e9, 0)
	s := newShare(200, 10) // fair share 20, 3 seats
	at := t0
	// answer comes gap after the last, to a request sent took before it.
	answer := func(gap, took time.Duration, overload bool) func() bool {
		return func() bool {
			at = at.Add(gap)
			return s.answered(at.Add(-took), at, overload)
		}
	}
	const fast = 10 * time.Millisecond
	for _, step := range []struct {
		name        string
		do          func() bool
		wantChanged bool
		wantRate    float64
	}{
		{"crowded at the fair share", func() bool { return s.crowd(true) }, false, 20},
		{"a fast answer while crowded", answer(time.Second, fast, false), false, 20},
		{"overloaded at the fair share", answer(time.Second, fast, true), false, 20},
		{"uncrowded after an overload", func() bool { return s.crowd(false) }, false, 20},
		{"an answer of exactly slowAnswer is fast", answer(time.Second, slowAnswer, false), true, 20 + 20.0/3},
		{"overloaded: halved, to no less than the fair share", answer(time.Second, fast, true), true, 20},
		{"after an overload, a fast answer adds a fair share per seats", answer(quietSpell-time.Millisecond, fast, false), true, 20 + 20.0/3},
		{"an answer quietSpell after the last probes again", answer(quietSpell, fast, false), true, 20 + 20.0/3 + 20},
		{"up to the cluster's rate", func() bool { s.rate = 190; return answer(time.Second, fast, false)() }, true, 200},
		{"at the cluster's rate", answer(time.Second, fast, false), false, 200},
		{"crowded above the fair share", func() bool { return s.crowd(true) }, true, 20},
	} {
		if changed := step.do(); changed != step.wantChanged || math.Abs(s.rate-step.wantRate) > 1e-9 {
			t.Errorf("%s: changed %v at %.2f, want %v at %.2f", step.name, changed, s.rate, step.wantChanged, step.wantRate)
		}
	}
}

// A drain that finds no other under way when it first looks, or after a
// quiet spell, starts at the cluster's whole rate: a lone drain, the
// common case, pays no slow start. One that finds others keeps to the
// fair share, and after an overload the share rises only by answers.
func TestShareLoneDrainStartsAtTheClusterRate(t *testing.T) {
	s := newShare(200, 10)
	if !s.crowd(false) || s.rate != 200 || s.seats() != 25 {
		t.Fatalf("a fresh share finding no other drain: rate %.0f with %d seats, want 200 with 25", s.rate, s.seats())
	}
	crowded := newShare(200, 10)
	if crowded.crowd(true) || crowded.rate != 20 {
		t.Errorf("a fresh share finding other drains: rate %.0f, want the fair 20", crowded.rate)
	}
	t0 := time.Unix(1e9, 0)
	s.answered(t0, t0.Add(time.Second), true) // an overload: 100
	if s.crowd(false) || s.rate != 100 {
		t.Errorf("uncrowded after an overload: rate %.0f, want 100 (it rises by answers)", s.rate)
	}
	at := t0.Add(time.Second + quietSpell)
	s.answered(at, at.Add(10*time.Millisecond), false) // a quiet spell: probing again
	if !s.crowd(false) || s.rate != 200 {
		t.Errorf("uncrowded after a quiet spell: rate %.0f, want 200", s.rate)
	}
}
