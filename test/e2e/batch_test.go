package e2e

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// A live batch of ten with partial failures: drains a disruption budget
// blocks come back for redelivery, everything else is acknowledged, and the
// malformed messages are rejected (redelivery cannot fix them), not retried.
func TestLiveBatchOfTenWithPartialFailures(t *testing.T) {
	ctx := testContext(t)
	// A 14 s function with a 2 s reserve leaves the drains about 5 s: the
	// pipeline keeps 5 s for the hooks and 2 s for the drain report, and a
	// loaded machine takes a second or more before the first eviction.
	l := startLive(t, "DRAINPIPE_DEADLINE_RESERVE=2s", "DRAINPIPE_ACTION_SPOT=cordon-and-drain",
		"DRAINPIPE_ACTION_REBALANCE=cordon", "DRAINPIPE_ACTION_ASG_LIFECYCLE=cordon-and-drain",
		"DRAINPIPE_REBALANCE_HOLD=0") // the hold (a retry by design) is tested in internal/pipeline
	nodes := l.nodes(ctx, 6, served)
	foreign := l.node(ctx, "someone-elses-cluster")
	spotA, spotB, rebalanced, hookBlocked, spotBlocked, hookFree := nodes[0], nodes[1], nodes[2], nodes[3], nodes[4], nodes[5]
	for name, n := range map[string]*corev1.Node{"web-a": spotA, "web-b": spotB, "web-g": hookFree, "db-d": hookBlocked, "db-e": spotBlocked} {
		l.k8s.Deployment(ctx, name, 2, fixture.PinnedTo(n.Name))
	}
	l.k8s.Deployment(ctx, "web-c", 1, fixture.PinnedTo(rebalanced.Name))
	l.k8s.Deployment(ctx, "web-f", 1, fixture.PinnedTo(foreign.Name))
	for _, db := range []string{"db-d", "db-e"} {
		l.k8s.PDB(ctx, db, map[string]string{"app": db}, fixture.MinAvailable(2))
	}
	blocked := awsfake.LifecycleAction{ASG: "e2e-asg", Hook: "drain", Token: "7a1e7b9c-0000-4000-8000-00000000000d", InstanceID: fixture.InstanceID(hookBlocked)}
	free := awsfake.LifecycleAction{ASG: "e2e-asg", Hook: "drain", Token: "7a1e7b9c-0000-4000-8000-00000000000a", InstanceID: fixture.InstanceID(hookFree)}
	l.aws.AddLifecycleAction(blocked)
	l.aws.AddLifecycleAction(free)

	msgs := []message{
		{id: "m01-spot", body: spotWarning(t, fixture.InstanceID(spotA))},
		{id: "m02-spot", body: spotWarning(t, fixture.InstanceID(spotB))},
		{id: "m03-rebalance", body: freshEvent(t, "eventbridge-rebalance-recommendation.json", forEC2Instance(fixture.InstanceID(rebalanced), awsfake.Region))},
		{id: "m04-hook-blocked", body: terminateHook(t, blocked)},
		{id: "m05-spot-blocked", body: spotWarning(t, fixture.InstanceID(spotBlocked))},
		{id: "m06-malformed", body: eventBody(t, "bad-malformed-json.json")},
		{id: "m07-bad-instance-id", body: eventBody(t, "bad-instance-id.json")},
		{id: "m08-foreign", body: spotWarning(t, fixture.InstanceID(foreign))},
		{id: "m09-hook", body: terminateHook(t, free)},
		{id: "m10-not-in-ec2", body: spotWarning(t, "i-0e2e00000000000ff")},
	}
	res := l.invoke(ctx, t, 14*time.Second, msgs...)

	if diff := cmp.Diff([]string{"m04-hook-blocked", "m05-spot-blocked"}, failedIDs(batchResponse(t, res.Body))); diff != "" {
		t.Errorf("batch item failures (-want +got):\n%s", diff)
	}
	want := map[string]string{
		"m01-spot": "done", "m02-spot": "done", "m03-rebalance": "done", "m04-hook-blocked": "retry",
		"m05-spot-blocked": "retry", "m06-malformed": "rejected", "m07-bad-instance-id": "rejected",
		"m08-foreign": "ignored", "m09-hook": "done", "m10-not-in-ec2": "ignored",
	}
	got := map[string]string{}
	for id, r := range recordLogs(l.rt) {
		got[id] = r.Outcome
		if r.Count != 1 {
			t.Errorf("message %s: %d summary lines, want 1", id, r.Count)
		}
		if r.Outcome != "done" && r.Reason == "" {
			t.Errorf("message %s: outcome %s without a reason", id, r.Outcome)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("record outcomes (-want +got):\n%s", diff)
	}

	// The cluster: what each record asked for, and nothing more.
	for _, c := range []struct {
		node     *corev1.Node
		cordoned bool
		pods     int
	}{
		{spotA, true, 0}, {spotB, true, 0}, {hookFree, true, 0},
		{rebalanced, true, 1}, // cordoned only
		{hookBlocked, true, 2}, {spotBlocked, true, 2},
		{foreign, false, 1},
	} {
		l.checkNode(ctx, t, c.node.Name, c.cordoned, c.pods)
	}
	// Only the hook whose drain finished is completed; the blocked one is
	// kept alive for the redelivery.
	if diff := cmp.Diff([]awsfake.Completion{{LifecycleAction: free, Result: "CONTINUE"}}, l.aws.Completed()); diff != "" {
		t.Errorf("completed lifecycle actions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]awsfake.LifecycleAction{blocked}, l.aws.Pending()); diff != "" {
		t.Errorf("pending lifecycle actions (-want +got):\n%s", diff)
	}
	if n := heartbeatsFor(l.aws, blocked); n == 0 {
		t.Errorf("the blocked hook was never heartbeated")
	}
	// Only the two retried records are made visible again early, in one call.
	hastened := []awsfake.VisibilityChange{
		{QueueURL: l.queue, ReceiptHandle: l.receipt("m04-hook-blocked"), Timeout: 15},
		{QueueURL: l.queue, ReceiptHandle: l.receipt("m05-spot-blocked"), Timeout: 15},
	}
	if diff := cmp.Diff(hastened, l.aws.VisibilityChanges()); diff != "" {
		t.Errorf("visibility changes (-want +got):\n%s", diff)
	}
	if n := len(l.aws.CallsTo("ChangeMessageVisibilityBatch")); n != 1 {
		t.Errorf("%d ChangeMessageVisibilityBatch calls, want 1 for the batch", n)
	}
	// The handler prepares one EC2 lookup for the whole batch (retries of
	// it aside) instead of one per record.
	var ids []string
	for _, n := range append(nodes, foreign) {
		ids = append(ids, fixture.InstanceID(n))
	}
	ids = append(ids, "i-0e2e00000000000ff")
	if !slices.ContainsFunc(l.aws.CallsTo("DescribeInstances"), func(c awsfake.Call) bool { return sameSet(ids, instanceParams(c)) }) {
		t.Errorf("no DescribeInstances call named the batch's %d instances at once: %+v", len(ids), l.aws.CallsTo("DescribeInstances"))
	}
}

// heartbeatsFor counts the heartbeats the fake took for one action.
func heartbeatsFor(fake *awsfake.Server, a awsfake.LifecycleAction) int {
	n := 0
	for _, c := range fake.CallsTo("RecordLifecycleActionHeartbeat") {
		if c.Params.Get("LifecycleActionToken") == a.Token {
			n++
		}
	}
	return n
}

// instanceParams lists the instance ids an EC2 call asks for, by
// InstanceId.N or in an instance-id filter (Filter.N.Value.M).
func instanceParams(c awsfake.Call) []string {
	var ids []string
	for k, v := range c.Params {
		if strings.HasPrefix(k, "InstanceId.") {
			ids = append(ids, v...)
		}
		if f, _, ok := strings.Cut(k, ".Value."); ok && strings.HasPrefix(k, "Filter.") && c.Params.Get(f+".Name") == "instance-id" {
			ids = append(ids, v...)
		}
	}
	return ids
}

// sameSet reports whether a and b hold the same strings, in any order.
func sameSet(a, b []string) bool {
	a, b = slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b))
	return slices.Equal(a, b)
}
