package drain

import (
	"context"
	"runtime"
	"testing"
	"time"
)

// take asks p for one request at now without waiting: whether it may go.
func take(p *Pace, now time.Time, urgent bool) bool {
	q := turn(Place{Urgent: urgent})
	p.mu.Lock()
	defer p.mu.Unlock()
	granted := p.waiting.add(q)
	p.serveLocked(now)
	return p.waiting.leave(q, granted)
}

// At their fair shares (before any answer raises one), however many
// instances the event source runs, their evictions together keep to the
// cluster's rate: over any span T, at most rate × T plus one second's
// burst (at least one request per instance), each instance asking as fast
// as it can.
func TestPaceSumKeepsTheClusterRate(t *testing.T) {
	t.Parallel() // waits on real time; in parallel, the package's short tests stay short
	t0 := time.Unix(1e9, 0)
	for _, c := range []struct{ rate, instances int }{{200, 1}, {200, 10}, {200, 3}, {200, 200}, {1000, 10}, {50, 1000}} {
		paces := make([]*Pace, c.instances)
		for i := range paces {
			paces[i] = newPace(float64(c.rate), c.instances, realClock{})
		}
		const span = 10 * time.Second
		sent := 0
		for now := t0; now.Before(t0.Add(span)); now = now.Add(5 * time.Millisecond) {
			for _, p := range paces {
				for take(p, now, false) {
					sent++
				}
			}
		}
		most := c.rate*int(span/time.Second) + max(c.rate, c.instances)
		if sent > most {
			t.Errorf("rate %d over %d instances: %d requests in %s, want at most %d", c.rate, c.instances, sent, span, most)
		}
		if least := c.rate * int(span/time.Second) * 9 / 10; sent < least && c.rate >= c.instances {
			t.Errorf("rate %d over %d instances: %d requests in %s, want about %d", c.rate, c.instances, sent, span, least)
		}
	}
}

// When requests wait, a drain racing a deadline goes first: the token
// that frees goes to the urgent request queued after the other.
func TestPaceDeadlinesFirst(t *testing.T) {
	t0 := time.Unix(1e9, 0)
	p := spentPace(t, t0)
	p.mu.Lock()
	later := p.waiting.add(turn(Place{}))
	urgent := p.waiting.add(turn(Place{Urgent: true}))
	p.serveLocked(t0.Add(time.Second))
	p.mu.Unlock()
	select {
	case <-urgent:
	default:
		t.Error("the urgent request still waits")
	}
	select {
	case <-later:
		t.Error("the request that can wait went with the urgent one's token")
	default:
	}
}

// A request whose drain stops gives its place up: it does not hold the
// others' tokens.
func TestPaceWaitEndsWithItsDrain(t *testing.T) {
	p := newPace(1, 3600, realClock{}) // one request an hour
	done, err := p.Wait(context.Background(), Place{Urgent: true})
	if err != nil {
		t.Fatal(err)
	}
	done(nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Wait(ctx, Place{Urgent: true, Depth: 1}); err == nil {
		t.Error("a request went past an empty bucket")
	}
	if n := p.waiting.len(); n != 0 {
		t.Errorf("%d requests left waiting", n)
	}
	var none *Pace
	if _, err := none.Wait(ctx, Place{}); err != nil {
		t.Errorf("a nil pace held a request: %v", err)
	}
}

// When requests wait, the freed tokens go in turn: deadlines first, and
// within each, pods whose budget chains their evictions before the rest.
func TestPaceServesInTurn(t *testing.T) {
	t0 := time.Unix(1e9, 0)
	p := spentPace(t, t0)
	type req struct {
		name            string
		urgent, chained bool
	}
	// Queued in the reverse of the order they are to go.
	reqs := []req{{"hook", false, false}, {"hook chained", false, true}, {"spot", true, false}, {"spot chained", true, true}}
	ws := make([]chan struct{}, len(reqs))
	p.mu.Lock()
	for i, r := range reqs {
		ws[i] = p.waiting.add(turn(Place{Urgent: r.urgent, Depth: b2i(r.chained)}))
	}
	p.mu.Unlock()
	for n := range reqs {
		p.mu.Lock()
		p.serveLocked(t0.Add(time.Duration(n+1) * time.Second))
		p.mu.Unlock()
		for i := range reqs {
			select {
			case <-ws[i]:
				if want := len(reqs) - 1 - i; want > n {
					t.Errorf("token %d went to %q, before its turn", n+1, reqs[i].name)
				}
			default:
				if want := len(reqs) - 1 - i; want <= n {
					t.Errorf("after %d tokens %q still waits", n+1, reqs[i].name)
				}
			}
		}
	}
}

// An instance keeps no more evictions in flight than its seats, and a
// freed seat goes to the eviction first in turn; events have seats of
// their own: the API server's slowness slows the instance instead of
// filling its queues, and a report never waits behind the evictions.
func TestSeatsBoundWritesInFlight(t *testing.T) {
	s := newSeats(2)
	ctx := context.Background()
	for range 2 {
		if err := s.acquire(ctx, 0); err != nil {
			t.Fatal(err)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.acquire(cancelled, 0); err == nil {
		t.Fatal("a third write went with two seats held")
	}
	hook, spot := make(chan error, 1), make(chan error, 1)
	go func() { hook <- s.acquire(ctx, turn(Place{})) }()
	waitQueued(t, s, turn(Place{}))
	go func() { spot <- s.acquire(ctx, turn(Place{Urgent: true})) }()
	waitQueued(t, s, turn(Place{Urgent: true}))
	s.release()
	if err := <-spot; err != nil {
		t.Fatal(err)
	}
	select {
	case <-hook:
		t.Fatal("the hook's eviction took the seat the Spot eviction waited for")
	default:
	}
	s.release()
	if err := <-hook; err != nil {
		t.Fatal(err)
	}

	p := newPace(1, 1, realClock{})
	p.seats.held = p.seats.limit // every eviction seat held
	release, err := p.Seat(ctx)
	if err != nil {
		t.Fatalf("an event waited behind the evictions: %v", err)
	}
	release()
	var none *Pace
	if release, err = none.Seat(ctx); err != nil {
		t.Fatalf("a nil pace held a write: %v", err)
	}
	release()
}

// waitQueued returns once a write of turn waits for a seat.
func waitQueued(t *testing.T, s *seats, turn int) {
	t.Helper()
	for {
		s.mu.Lock()
		n := len(s.waiting[turn])
		s.mu.Unlock()
		if n > 0 {
			return
		}
		runtime.Gosched()
	}
}

// A Pace's seats start as its fair share of the rate over seatTime, at
// least two.
func TestPaceSeats(t *testing.T) {
	for _, c := range []struct{ rate, instances, want int }{{200, 10, 3}, {200, 1, 25}, {200, 100, 2}, {1000, 10, 13}} {
		if got := newPace(float64(c.rate), c.instances, realClock{}).seats.limit; got != c.want {
			t.Errorf("rate %d over %d instances: %d seats, want %d", c.rate, c.instances, got, c.want)
		}
	}
}

// spentPace is a Pace of one request a second whose token at t0 is spent.
func spentPace(t *testing.T, t0 time.Time) *Pace {
	t.Helper()
	p := newPace(1, 1, realClock{})
	if !take(p, t0, false) {
		t.Fatal("the first request waited")
	}
	return p
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Pods their budget refused wait behind every pod of their deadline class
// that can go now, however deep their chain: dozens of refused pods
// retrying do not take the tokens and seats of the free pods and the hook
// pods of the same instance, and the hook pods' retries come last.
func TestPaceRefusalsWaitBehindFreePods(t *testing.T) {
	t0 := time.Unix(1e9, 0)
	p := spentPace(t, t0)
	type req struct {
		name string
		at   Place
	}
	var reqs []req
	for range 30 {
		reqs = append(reqs, req{"refused spot pod", Place{Urgent: true, Depth: 3, Retry: true}})
		reqs = append(reqs, req{"refused hook pod", Place{Depth: 3, Retry: true}})
	}
	free := []req{{"free spot pod", Place{Urgent: true}}, {"free hook pod", Place{}}, {"chained hook pod", Place{Depth: 2}}}
	reqs = append(reqs, free...)
	p.mu.Lock()
	ws := make([]chan struct{}, len(reqs))
	for i, r := range reqs {
		ws[i] = p.waiting.add(turn(r.at))
	}
	p.mu.Unlock()
	order := map[string]int{"free spot pod": 0, "refused spot pod": 1, "chained hook pod": 2, "free hook pod": 3, "refused hook pod": 4}
	last := 0
	for n := range reqs {
		p.mu.Lock()
		p.serveLocked(t0.Add(time.Duration(n+1) * time.Second))
		p.mu.Unlock()
		for i, w := range ws {
			select {
			case <-w:
			default:
				continue
			}
			ws[i] = nil // a nil channel never selects again
			if o := order[reqs[i].name]; o < last {
				t.Fatalf("token %d went to a %s after a later turn's", n+1, reqs[i].name)
			} else {
				last = o
			}
		}
	}
}

// Crowded says what the instance last saw of other drains, for the
// events a wave's drains leave out (internal/kevents).
func TestPaceCrowded(t *testing.T) {
	var none *Pace
	if none.Crowded() {
		t.Error("a nil pace crowded")
	}
	p := NewPace(200, 10)
	if p.Crowded() {
		t.Error("a new pace crowded before it looked")
	}
	p.crowd(true)
	if !p.Crowded() {
		t.Error("not crowded after others were seen draining")
	}
	p.crowd(false)
	if p.Crowded() {
		t.Error("still crowded after the others finished")
	}
	one := p.drainingNode("a")
	if p.Crowded() {
		t.Error("crowded by a lone drain")
	}
	two := p.drainingNode("b")
	if !p.Crowded() {
		t.Error("not crowded by two drains of the instance's own")
	}
	two()
	one()
	if p.Crowded() {
		t.Error("still crowded after the instance's drains ended")
	}
}
