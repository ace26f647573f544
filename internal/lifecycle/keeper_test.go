package lifecycle

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/internal/event"
)

// The keeper's bookkeeping (who holds an action, when its group of one
// cadence starts and stops, what a heartbeat's answer means) over fake
// calls and a clock whose ticks the test sends; the heartbeats against
// Auto Scaling are proven in the pipeline's tests.

// fakeCalls answers heartbeats from answers (nil once spent), telling each
// on beats; its hooks' heartbeat timeout is timeout (an error when 0).
type fakeCalls struct {
	timeout   time.Duration
	answers   chan error
	beats     chan event.Lifecycle
	completes int
	complete  error
}

func newFakeCalls(timeout time.Duration, answers ...error) *fakeCalls {
	c := &fakeCalls{timeout: timeout, answers: make(chan error, len(answers)), beats: make(chan event.Lifecycle, 64)}
	for _, a := range answers {
		c.answers <- a
	}
	return c
}

func (c *fakeCalls) Heartbeat(_ context.Context, l event.Lifecycle) error {
	c.beats <- l
	select {
	case err := <-c.answers:
		return err
	default:
		return nil
	}
}

func (c *fakeCalls) Complete(context.Context, event.Lifecycle) (bool, error) {
	c.completes++
	return false, c.complete
}

func (c *fakeCalls) HeartbeatTimeout(context.Context, string, string) (time.Duration, error) {
	if c.timeout == 0 {
		return 0, errors.New("no such hook")
	}
	return c.timeout, nil
}

// tickClock hands each ticker it makes to tickers; the test ticks it.
type tickClock struct {
	now     time.Time
	tickers chan *fakeTicker
}

type fakeTicker struct {
	every   time.Duration
	c       chan time.Time
	stopped chan struct{}
}

func (c tickClock) Now() time.Time { return c.now }

func (c tickClock) NewTicker(d time.Duration) Ticker {
	t := &fakeTicker{every: d, c: make(chan time.Time), stopped: make(chan struct{})}
	c.tickers <- t
	return t
}

func (t *fakeTicker) C() <-chan time.Time { return t.c }
func (t *fakeTicker) Stop()               { close(t.stopped) }

// keeperSetup is a keeper over calls heartbeating at most every 25 s, and
// a context bounding the test so that a failure ends instead of hanging.
func keeperSetup(t *testing.T, calls *fakeCalls) (context.Context, *Keeper, tickClock) {
	t.Helper()
	clock := tickClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), tickers: make(chan *fakeTicker, 4)}
	k, err := NewKeeper(KeeperConfig{HeartbeatInterval: 25 * time.Second, MaxHookAge: time.Hour, MaxReceiveCount: 3,
		CompleteBackoff: time.Millisecond}, KeeperDeps{Calls: calls, Record: func(Op, event.Lifecycle, bool, error) {},
		Clock: clock, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx, k, clock
}

// wait receives from c, failing the test when ctx ends first.
func wait[T any](t *testing.T, ctx context.Context, c <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-ctx.Done():
		t.Fatalf("waiting for %s: %v", what, ctx.Err())
		var zero T
		return zero
	}
}

// tick sends one tick to t.
func tick(t *testing.T, ctx context.Context, tk *fakeTicker) {
	t.Helper()
	select {
	case tk.c <- time.Time{}:
	case <-ctx.Done():
		t.Fatalf("ticking: %v", ctx.Err())
	}
}

// A prepared hook is heartbeated once, then every third of its timeout;
// Acquire takes the prepared hold over, each further hold counts, and the
// last Release forgets the hook and stops its cadence.
func TestKeeperHoldsUntilTheLastRelease(t *testing.T) {
	calls := newFakeCalls(30 * time.Second)
	ctx, k, clock := keeperSetup(t, calls)
	h := []Hook{{Lifecycle: hook}}
	k.Prepare(ctx, h, func(context.Context) {})
	k.Answered(ctx, h)
	if n := len(calls.beats); n != 1 {
		t.Fatalf("heartbeats after Prepare = %d, want 1", n)
	}
	tk := wait(t, ctx, clock.tickers, "the cadence's ticker")
	if tk.every != 10*time.Second {
		t.Errorf("cadence = %s, want a third of the 30 s timeout", tk.every)
	}
	k.Acquire(ctx, h) // takes the prepared hold over
	k.Acquire(ctx, h)
	k.Prepare(ctx, h, nil) // held already: nothing to start
	k.mu.Lock()
	refs, prepared := k.held[hook].refs, k.held[hook].prepared
	k.mu.Unlock()
	if refs != 3 || prepared != 1 {
		t.Errorf("held: %d refs, %d prepared; want 3 and 1", refs, prepared)
	}
	tick(t, ctx, tk)
	wait(t, ctx, calls.beats, "the tick's heartbeat")
	k.Release(h)
	k.Release(h)
	if heldCount(k) != 1 {
		t.Fatal("released twice of three holds: hook forgotten")
	}
	k.Release(h)
	wait(t, ctx, tk.stopped, "the cadence to stop")
	if heldCount(k) != 0 || len(k.groups) != 0 {
		t.Errorf("after the last release: %d held, %d groups; want none", len(k.held), len(k.groups))
	}
	if n := len(calls.beats); n != 0 {
		t.Errorf("%d heartbeats beyond the first and the tick's", n)
	}
	k.Release(h) // a hook no longer held: nothing to do
}

// A failed heartbeat is tried again at once; an answer that the action is
// over marks it inactive.
func TestKeeperRetriesThenMarksInactive(t *testing.T) {
	calls := newFakeCalls(0, errors.New("throttled"), ErrInactive)
	ctx, k, clock := keeperSetup(t, calls)
	h := []Hook{{Lifecycle: hook}}
	other := hook
	other.InstanceID = "i-0fedcba9876543210"
	if k.Inactive(h) {
		t.Error("Inactive of a hook not held")
	}
	k.Acquire(ctx, h)
	if n := len(calls.beats); n != 2 {
		t.Errorf("heartbeats = %d, want the failed one and its retry", n)
	}
	if !k.Inactive(h) {
		t.Error("Inactive after the action answered over: false")
	}
	if k.Inactive(nil) || k.Inactive(append(h, Hook{Lifecycle: other})) {
		t.Error("Inactive of no hooks, or with one not held: true")
	}
	if tk := wait(t, ctx, clock.tickers, "the ticker"); tk.every != 25*time.Second {
		t.Errorf("cadence with the timeout unknown = %s, want the 25 s cap", tk.every)
	}
	k.Release(h)
}

// heldCount is how many actions k holds.
func heldCount(k *Keeper) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.held)
}

// Linger keeps a task's pending hooks heartbeated from the next tick on,
// until its context ends; an ended context or a dry run holds nothing.
func TestKeeperLinger(t *testing.T) {
	calls := newFakeCalls(30 * time.Second)
	ctx, k, clock := keeperSetup(t, calls)
	h := []Hook{{Lifecycle: hook}}
	ended, end := context.WithCancel(ctx)
	end()
	k.Linger(ended, h)
	k.Linger(ctx, nil)
	if heldCount(k) != 0 {
		t.Fatal("Linger with its context ended, or of no hooks: held")
	}
	batch, endBatch := context.WithCancel(ctx)
	k.Linger(batch, h)
	if n, held := len(calls.beats), heldCount(k); n != 0 || held != 1 {
		t.Fatalf("Linger: %d heartbeats, %d held; want none before the tick, one held", n, held)
	}
	tk := wait(t, ctx, clock.tickers, "the ticker")
	tick(t, ctx, tk)
	wait(t, ctx, calls.beats, "the tick's heartbeat")
	endBatch()
	wait(t, ctx, tk.stopped, "the cadence to stop once the batch ends")

	k.cfg.DryRun = true
	k.Linger(ctx, h)
	k.Acquire(ctx, h)
	if heldCount(k) != 0 || len(calls.beats) != 0 {
		t.Error("dry run: a hook held or heartbeated")
	}
}

// A tick drops the hooks whose context ended (a batch given up) and stops
// the cadence once none is left.
func TestKeeperDropsEndedHolds(t *testing.T) {
	calls := newFakeCalls(30 * time.Second)
	ctx, k, clock := keeperSetup(t, calls)
	task, endTask := context.WithCancel(ctx)
	k.Acquire(task, []Hook{{Lifecycle: hook}})
	wait(t, ctx, calls.beats, "the first heartbeat")
	tk := wait(t, ctx, clock.tickers, "the ticker")
	endTask()
	tick(t, ctx, tk)
	wait(t, ctx, tk.stopped, "the cadence to stop")
	if heldCount(k) != 0 || len(calls.beats) != 0 {
		t.Errorf("%d held, %d heartbeats after the tick; want none", heldCount(k), len(calls.beats))
	}
}
