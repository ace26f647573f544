package lifecycle

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/test/awsfake"
)

// fixedClock stands still: LastChance reads only Now.
type fixedClock struct{ now time.Time }

func (c fixedClock) Now() time.Time { return c.now }

func (fixedClock) NewTicker(d time.Duration) Ticker { return realTicker{time.NewTicker(d)} }

type realTicker struct{ t *time.Ticker }

func (r realTicker) C() <-chan time.Time { return r.t.C }
func (r realTicker) Stop()               { r.t.Stop() }

// settleSetup is a keeper over the Auto Scaling fake with two pending
// actions: last (on the queue's last delivery) and fresh (first delivery).
func settleSetup(t *testing.T) (context.Context, *Keeper, *awsfake.Server, Hook, Hook) {
	t.Helper()
	c, fake, ctx := setup(t)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	k, err := NewKeeper(KeeperConfig{HeartbeatInterval: 25 * time.Second, MaxHookAge: 47 * time.Hour, MaxReceiveCount: 3,
		CompleteBackoff: time.Millisecond}, KeeperDeps{Calls: c, Record: func(Op, event.Lifecycle, bool, error) {},
		Clock: fixedClock{now}, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	other := hook
	other.Token, other.InstanceID = "1f2e3d4c-5b6a-4978-8a9b-0c1d2e3f4a5b", "i-0fedcba9876543210"
	fake.AddLifecycleAction(pending(hook))
	fake.AddLifecycleAction(pending(other))
	return ctx, k, fake, Hook{Lifecycle: hook, Time: now, ReceiveCount: 3}, Hook{Lifecycle: other, Time: now, ReceiveCount: 1}
}

// TestSettleRetryCompletesOnlyTheLastChance: a retried task completes the
// hook on its last delivery, says so, and leaves the other pending.
func TestSettleRetryCompletesOnlyTheLastChance(t *testing.T) {
	ctx, k, fake, last, fresh := settleSetup(t)
	reason, pending, failed := k.Settle(ctx, []Hook{last, fresh}, true, "drain unfinished", "node-a", slog.New(slog.DiscardHandler))
	want := "drain unfinished; lifecycle hook drain of workers completed before drain finished: last delivery " +
		"(receive count 3, max 3); 1 lifecycle hook(s) left pending"
	if reason != want || failed {
		t.Errorf("Settle = %q, failed %v; want %q, not failed", reason, failed, want)
	}
	if diff := cmp.Diff([]Hook{fresh}, pending); diff != "" {
		t.Errorf("pending (-want +got):\n%s", diff)
	}
	if n := len(fake.Completed()); n != 1 {
		t.Errorf("completed actions = %d, want 1", n)
	}
}

// TestSettleFinalFailureKeepsHooksPending: a final outcome completes every
// hook; a completion that fails keeps its hook pending and says why.
func TestSettleFinalFailureKeepsHooksPending(t *testing.T) {
	ctx, k, fake, last, fresh := settleSetup(t)
	fake.Inject("CompleteLifecycleAction", awsfake.AccessDenied, -1)
	reason, pending, failed := k.Settle(ctx, []Hook{last, fresh}, false, "drained", "node-a", slog.New(slog.DiscardHandler))
	if !failed || len(pending) != 2 || !strings.HasPrefix(reason, "drained; completing lifecycle hook drain of workers") {
		t.Errorf("Settle = %q, %d pending, failed %v; want both pending, failed, each failure said", reason, len(pending), failed)
	}
}

// TestCompleteLastOnlyOnTheLastDelivery: with no time to act, only the hook
// on its last delivery is completed; the other stays pending.
func TestCompleteLastOnlyOnTheLastDelivery(t *testing.T) {
	ctx, k, fake, last, fresh := settleSetup(t)
	completed, failed, pending := k.CompleteLast(ctx, []Hook{last, fresh}, slog.New(slog.DiscardHandler))
	if completed != 1 || len(failed) != 0 || len(pending) != 1 || pending[0] != fresh {
		t.Errorf("CompleteLast = %d completed, failed %v, pending %v; want 1, none, the fresh hook", completed, failed, pending)
	}
	if n := len(fake.Completed()); n != 1 {
		t.Errorf("completed actions = %d, want 1", n)
	}
	fake.Inject("CompleteLifecycleAction", awsfake.AccessDenied, -1)
	if completed, failed, pending := k.CompleteLast(ctx, []Hook{last}, slog.New(slog.DiscardHandler)); completed != 0 ||
		len(failed) != 1 || len(pending) != 1 {
		t.Errorf("CompleteLast, denied = %d completed, failed %v, %d pending; want 0, one failure, 1 pending",
			completed, failed, len(pending))
	}
}
