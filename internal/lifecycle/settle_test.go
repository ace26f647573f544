package lifecycle

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// A hook's cadence is a third of its heartbeat timeout, at most the
// interval and at least a second; its action may get its global timeout
// (a hundred heartbeat timeouts, at most 48 h) less a quarter, at most an
// hour, old; a message whose hooks are left pending comes back within half
// the shortest timeout. An unknown timeout counts as the configured
// interval and hook age.
func TestKeeperTimings(t *testing.T) {
	for _, tc := range []struct {
		timeout              time.Duration
		cadence, age, within time.Duration
	}{
		{0, 25 * time.Second, time.Hour, 25 * time.Second},
		{30 * time.Second, 10 * time.Second, 50*time.Minute - 12*time.Minute - 30*time.Second, 15 * time.Second},
		{75 * time.Second, 25 * time.Second, 125*time.Minute - 31*time.Minute - 15*time.Second, 37 * time.Second},
		{2 * time.Second, time.Second, 200*time.Second - 50*time.Second, time.Second},
		{time.Hour, 25 * time.Second, MaxActionLife - time.Hour, 30 * time.Minute},
	} {
		_, k, _ := keeperSetup(t, newFakeCalls(tc.timeout))
		h := Hook{Lifecycle: hook}
		ctx := context.Background()
		if got := k.cadence(ctx, h); got != tc.cadence {
			t.Errorf("timeout %s: cadence = %s, want %s", tc.timeout, got, tc.cadence)
		}
		if got := k.maxAge(ctx, h); got != tc.age {
			t.Errorf("timeout %s: maxAge = %s, want %s", tc.timeout, got, tc.age)
		}
		if got := k.RetryWithin(ctx, []Hook{h}); got != tc.within {
			t.Errorf("timeout %s: RetryWithin = %s, want %s", tc.timeout, got, tc.within)
		}
	}
	_, k, _ := keeperSetup(t, newFakeCalls(0))
	if got := k.RetryWithin(context.Background(), nil); got != 0 {
		t.Errorf("RetryWithin of no hooks = %s, want 0", got)
	}
}

// RetryWithin answers for the shortest timeout among the hooks, whichever
// comes first.
func TestRetryWithinShortest(t *testing.T) {
	_, k, _ := keeperSetup(t, newFakeCalls(0))
	h := Hook{Lifecycle: hook}
	k.timeouts = timeoutsBy{hook.Hook: 10 * time.Second, "long": time.Minute}
	other := hook
	other.Hook = "long"
	for _, hooks := range [][]Hook{{h, {Lifecycle: other}}, {{Lifecycle: other}, h}} {
		if got := k.RetryWithin(context.Background(), hooks); got != 5*time.Second {
			t.Errorf("RetryWithin(%s, %s) = %s, want 5s", hooks[0].Hook, hooks[1].Hook, got)
		}
	}
}

// timeoutsBy answers each hook's heartbeat timeout by its name.
type timeoutsBy map[string]time.Duration

func (m timeoutsBy) HeartbeatTimeout(_ context.Context, _, hook string) (time.Duration, error) {
	return m[hook], nil
}

// An action exactly its maximum age old is on its last chance; a second
// younger is not.
func TestLastChanceAtTheMaxAge(t *testing.T) {
	_, k, clock := keeperSetup(t, newFakeCalls(0)) // max hook age 1 h
	h := Hook{Lifecycle: hook, Time: clock.now.Add(-time.Hour), ReceiveCount: 1}
	if why, last := k.LastChance(context.Background(), h); !last || !strings.Contains(why, "1h0m0s old") {
		t.Errorf("LastChance at the max age = %q, %v; want the last chance", why, last)
	}
	h.Time = h.Time.Add(time.Second)
	if why, last := k.LastChance(context.Background(), h); last {
		t.Errorf("LastChance a second before the max age = %q, true", why)
	}
}

// A completion that keeps failing is tried CompleteAttempts times, then
// reported; a dry run completes nothing.
func TestCompleteAttempts(t *testing.T) {
	calls := newFakeCalls(0)
	calls.complete = errors.New("throttled")
	ctx, k, _ := keeperSetup(t, calls)
	if err := k.Complete(ctx, Hook{Lifecycle: hook}, slog.New(slog.DiscardHandler)); err == nil || calls.completes != CompleteAttempts {
		t.Errorf("Complete = %v after %d calls; want an error after %d", err, calls.completes, CompleteAttempts)
	}
	k.cfg.DryRun = true
	if err := k.Complete(ctx, Hook{Lifecycle: hook}, slog.New(slog.DiscardHandler)); err != nil || calls.completes != CompleteAttempts {
		t.Errorf("dry run: Complete = %v, %d calls; want none", err, calls.completes-CompleteAttempts)
	}
}

// A retried task whose every hook is on its last chance leaves none
// pending, and says none.
func TestSettleRetryAllOnTheLastChance(t *testing.T) {
	ctx, k, _, last, _ := settleSetup(t)
	reason, pending, failed := k.Settle(ctx, []Hook{last}, true, "drain unfinished", "node-a", slog.New(slog.DiscardHandler))
	if strings.Contains(reason, "pending") || len(pending) != 0 || failed {
		t.Errorf("Settle = %q, %d pending, failed %v; want the hook completed, none pending", reason, len(pending), failed)
	}
}
