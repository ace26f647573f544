package e2e

import (
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/drainpipe/drainpipe/test/awsfake"
)

// A drain blocked over six deliveries keeps its lifecycle hook: each retry
// comes back within half the hook's 60 s heartbeat timeout, although the
// 5 s backoff reaches 80 s on the 5th delivery. The Auto Scaling fake's
// clock stands still during an invocation and moves between deliveries by
// the visibility timeout the retry was given, so a longer one expires the
// action just as Auto Scaling would.
func TestLiveRetriedHookNeverExpires(t *testing.T) {
	ctx := testContext(t)
	l := newLive(t)
	var mu sync.Mutex
	now := time.Now()
	l.aws.SetClock(func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	})
	_, id := l.blockedNode(ctx, t, "db-r1")
	l.aws.AddLifecycleHook(awsfake.LifecycleHook{ASG: "e2e-asg", Name: "drain", HeartbeatTimeout: time.Minute})
	hook := awsfake.LifecycleAction{ASG: "e2e-asg", Hook: "drain", Token: "7a1e7b9c-0000-4000-8000-0000000000e1", InstanceID: id}
	l.aws.AddLifecycleAction(hook)
	l.start(t, "DRAINPIPE_RETRY_DELAY=5s", "DRAINPIPE_MAX_RECEIVE_COUNT=10",
		"DRAINPIPE_DEADLINE_RESERVE=2s", "DRAINPIPE_HOOK_RESERVE=1s")

	var delays []int
	for count := 1; count <= 6; count++ {
		msg := message{id: "hook-retried", body: terminateHook(t, hook), receiveCount: count}
		res := l.invoke(ctx, t, 5*time.Second, msg)
		if diff := cmp.Diff([]string{msg.id}, failedIDs(batchResponse(t, res.Body))); diff != "" {
			t.Fatalf("delivery %d: batch item failures (-want +got):\n%s", count, diff)
		}
		changes := l.aws.VisibilityChanges()
		if len(changes) != count || changes[count-1].ReceiptHandle != l.receipt(msg.id) {
			t.Fatalf("delivery %d: visibility changes %+v, want one per delivery, the last for receipt %s", count, changes, l.receipt(msg.id))
		}
		delays = append(delays, changes[count-1].Timeout)
		mu.Lock()
		now = now.Add(time.Duration(changes[count-1].Timeout) * time.Second)
		mu.Unlock()
	}

	if diff := cmp.Diff([]int{5, 10, 20, 30, 30, 30}, delays); diff != "" {
		t.Errorf("visibility timeouts per delivery, s (-want +got):\n%s", diff)
	}
	for _, c := range l.aws.HookCalls() {
		if c.Op == awsfake.OpExpire {
			t.Errorf("lifecycle action expired at %s, between two deliveries", c.Time)
		}
	}
	if got := l.aws.Completed(); len(got) != 0 {
		t.Errorf("lifecycle action ended while the drain was blocked: %+v", got)
	}
	if diff := cmp.Diff([]awsfake.LifecycleAction{hook}, l.aws.Pending()); diff != "" {
		t.Errorf("pending lifecycle actions (-want +got):\n%s", diff)
	}
}
