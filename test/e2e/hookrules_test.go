package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// blockedNode is a served node with two pods of app a PDB keeps in place.
func (l *live) blockedNode(ctx context.Context, t *testing.T, app string) (name, instanceID string) {
	t.Helper()
	n := l.node(ctx, served)
	l.k8s.Deployment(ctx, app, 2, fixture.PinnedTo(n.Name))
	l.k8s.PDB(ctx, app, map[string]string{"app": app}, fixture.MinAvailable(2))
	return n.Name, fixture.InstanceID(n)
}

// blockedPair sets up two blocked nodes, each with a pending terminate
// action (tokens ending in tag+"1" and tag+"2"); hb > 0 defines the hook
// with that heartbeat timeout, so its actions expire without heartbeats.
func (l *live) blockedPair(ctx context.Context, t *testing.T, tag string, hb time.Duration) (nodes [2]string, hooks [2]awsfake.LifecycleAction) {
	t.Helper()
	if hb > 0 {
		l.aws.AddLifecycleHook(awsfake.LifecycleHook{ASG: "e2e-asg", Name: "drain", HeartbeatTimeout: hb})
	}
	for i := range nodes {
		var id string
		nodes[i], id = l.blockedNode(ctx, t, fmt.Sprintf("db-%s%d", tag, i+1))
		hooks[i] = awsfake.LifecycleAction{ASG: "e2e-asg", Hook: "drain",
			Token: fmt.Sprintf("7a1e7b9c-0000-4000-8000-0000000000%s%d", tag, i+1), InstanceID: id}
	}
	// The actions start their heartbeat clocks (real time, as on Auto
	// Scaling) only once both nodes are set up: a slow setup of the
	// second node must not eat the first action's timeout.
	for _, h := range hooks {
		l.aws.AddLifecycleAction(h)
	}
	return nodes, hooks
}

func rebalanceFor(t *testing.T, instanceID string) []byte {
	return freshEvent(t, "eventbridge-rebalance-recommendation.json", forEC2Instance(instanceID, awsfake.Region))
}

// In a mixed batch, a hook is completed before its node is drained only
// when the record that carried it is on its last delivery: node A's hook
// is on its first delivery while a rebalance notice for node A is on its
// last, and stays pending; node B's hook is on its own last delivery and
// is completed although B still has its pods.
func TestLiveMixedBatchCompletesOnlyLastDeliveryHooks(t *testing.T) {
	ctx := testContext(t)
	l := newLive(t)
	nodes, hooks := l.blockedPair(ctx, t, "a", 5*time.Minute)
	a, b, hookA, hookB := nodes[0], nodes[1], hooks[0], hooks[1]
	l.start(t, "DRAINPIPE_DEADLINE_RESERVE=2s", "DRAINPIPE_HOOK_RESERVE=3s", "DRAINPIPE_MAX_RECEIVE_COUNT=5")

	res := l.invoke(ctx, t, 8*time.Second,
		message{id: "hook-a", body: terminateHook(t, hookA), receiveCount: 1},
		message{id: "rebalance-a", body: rebalanceFor(t, hookA.InstanceID), receiveCount: 5},
		message{id: "hook-b", body: terminateHook(t, hookB), receiveCount: 5},
	)

	if diff := cmp.Diff([]string{"hook-a", "rebalance-a", "hook-b"}, failedIDs(batchResponse(t, res.Body))); diff != "" {
		t.Errorf("batch item failures (-want +got):\n%s", diff)
	}
	want := []awsfake.Completion{{LifecycleAction: hookB, Result: "CONTINUE"}}
	if diff := cmp.Diff(want, l.aws.Completed()); diff != "" {
		t.Errorf("completed lifecycle actions (-want +got):\n%s", diff)
	}
	for _, c := range l.aws.HookCalls() {
		if c.Op == awsfake.OpComplete && c.Token == hookA.Token {
			t.Errorf("node %s's hook completed at %s on its first delivery, with pods still on the node", a, c.Time)
		}
	}
	if got := l.podsOn(ctx, t, a); len(got) != 2 {
		t.Errorf("pods on %s = %v, want the two the budget protects", a, got)
	}
	if got := l.podsOn(ctx, t, b); len(got) != 2 {
		t.Errorf("pods on %s = %v, want the two the budget protects", b, got)
	}
}

// With one task at a time, a hook queued behind another node's long drain
// is kept alive by the batch's keep-alive from the moment the batch is
// planned: with a heartbeat timeout far shorter than the invocation,
// neither action expires (the fake expires them as Auto Scaling does).
func TestLiveQueuedTaskHookKeptAlive(t *testing.T) {
	ctx := testContext(t)
	l := newLive(t)
	// 10 s: heartbeats every 3–4 s; the invocation lasts 24 s. The
	// timeout leaves a loaded machine room for the bootstrap's start.
	_, hooks := l.blockedPair(ctx, t, "b", 10*time.Second)
	hookA, hookB := hooks[0], hooks[1]
	l.start(t, "DRAINPIPE_RECORD_CONCURRENCY=1", "DRAINPIPE_DEADLINE_RESERVE=2s", "DRAINPIPE_HOOK_RESERVE=1s")

	res := l.invoke(ctx, t, 24*time.Second,
		message{id: "hook-a", body: terminateHook(t, hookA)},
		message{id: "hook-b", body: terminateHook(t, hookB)},
	)

	if diff := cmp.Diff([]string{"hook-a", "hook-b"}, failedIDs(batchResponse(t, res.Body))); diff != "" {
		t.Errorf("batch item failures (-want +got):\n%s", diff)
	}
	if got := l.aws.Completed(); len(got) != 0 {
		t.Errorf("lifecycle actions ended (expired or completed) during the blocked drains: %+v", got)
	}
	if diff := cmp.Diff([]awsfake.LifecycleAction{hookA, hookB}, l.aws.Pending()); diff != "" {
		t.Errorf("pending lifecycle actions (-want +got):\n%s", diff)
	}
	if n := len(l.aws.CallsTo("DescribeLifecycleHooks")); n != 1 {
		t.Errorf("DescribeLifecycleHooks calls = %d, want 1 (cached per group and hook)", n)
	}
}

// A function timeout within the reserves leaves no time to act: the
// records are retried, but the hook on its last delivery is still
// completed, the one on its first left pending, and an error says why.
func TestLiveTimeoutWithinReserveCompletesLastDeliveryHooks(t *testing.T) {
	ctx := testContext(t)
	l := newLive(t)
	nodes, hooks := l.blockedPair(ctx, t, "c", 0)
	a, last, first := nodes[0], hooks[0], hooks[1]
	l.start(t, "DRAINPIPE_DEADLINE_RESERVE=10s", "DRAINPIPE_MAX_RECEIVE_COUNT=5")

	res := l.invoke(ctx, t, 8*time.Second,
		message{id: "hook-last", body: terminateHook(t, last), receiveCount: 5},
		message{id: "hook-first", body: terminateHook(t, first), receiveCount: 1},
	)

	if diff := cmp.Diff([]string{"hook-last", "hook-first"}, failedIDs(batchResponse(t, res.Body))); diff != "" {
		t.Errorf("batch item failures (-want +got):\n%s", diff)
	}
	want := []awsfake.Completion{{LifecycleAction: last, Result: "CONTINUE"}}
	if diff := cmp.Diff(want, l.aws.Completed()); diff != "" {
		t.Errorf("completed lifecycle actions (-want +got):\n%s", diff)
	}
	if !logsContain(l.rt, `"level":"ERROR"`, "invocation cannot act") {
		t.Error("no error log saying why the invocation did nothing else")
	}
	l.checkNode(ctx, t, a, false, 2) // nothing acted on the node
}
