package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

func spotWarning(t *testing.T, instanceID string) []byte {
	return freshEvent(t, "eventbridge-spot-interruption.json", forEC2Instance(instanceID, awsfake.Region))
}

func terminateHook(t *testing.T, a awsfake.LifecycleAction) []byte {
	return freshEvent(t, "eventbridge-asg-terminate-lifecycle.json", forLifecycle(a.InstanceID, a.ASG, a.Hook, a.Token, awsfake.Region))
}

func TestLiveSpotWarningCordonsTaintsAndDrains(t *testing.T) {
	ctx := testContext(t)
	l := startLive(t)
	n := l.node(ctx, served)
	l.k8s.Deployment(ctx, "web", 3, fixture.PinnedTo(n.Name))
	l.k8s.DaemonSet(ctx, "agent")

	res := l.invoke(ctx, t, time.Minute, message{id: "spot-1", body: spotWarning(t, fixture.InstanceID(n))})

	if diff := cmp.Diff([]string{}, failedIDs(batchResponse(t, res.Body))); diff != "" {
		t.Errorf("batch item failures (-want +got):\n%s", diff)
	}
	unschedulable, tainted := cordoned(l.getNode(ctx, t, n.Name))
	if !unschedulable || !tainted {
		t.Errorf("node %s: unschedulable=%v tainted=%v, want both", n.Name, unschedulable, tainted)
	}
	// The invocation answered well before the two-minute warning ran out,
	// so whatever is gone now was drained before the deadline.
	if got := l.podsOn(ctx, t, n.Name); len(got) != 0 {
		t.Errorf("pods left on %s after the drain: %v", n.Name, got)
	}
}

func TestLiveLifecycleHookDrainedThenCompleted(t *testing.T) {
	ctx := testContext(t)
	l := startLive(t)
	n := l.node(ctx, served)
	l.k8s.Deployment(ctx, "web", 2, fixture.PinnedTo(n.Name))
	hook := awsfake.LifecycleAction{ASG: "e2e-asg", Hook: "drain", Token: "7a1e7b9c-0000-4000-8000-000000000001", InstanceID: fixture.InstanceID(n)}
	l.aws.AddLifecycleAction(hook)

	res := l.invoke(ctx, t, time.Minute, message{id: "hook-1", body: terminateHook(t, hook)})

	if diff := cmp.Diff([]string{}, failedIDs(batchResponse(t, res.Body))); diff != "" {
		t.Errorf("batch item failures (-want +got):\n%s", diff)
	}
	if got := l.podsOn(ctx, t, n.Name); len(got) != 0 {
		t.Errorf("pods left on %s: %v", n.Name, got)
	}
	want := []awsfake.Completion{{LifecycleAction: hook, Result: "CONTINUE"}}
	if diff := cmp.Diff(want, l.aws.Completed()); diff != "" {
		t.Errorf("completed lifecycle actions (-want +got):\n%s", diff)
	}
}

// A drain a PDB blocks outlasts a short invocation: the record comes back
// for redelivery, the hook is heartbeated, and the next delivery finishes.
func TestLiveBlockedDrainResumesOnRedelivery(t *testing.T) {
	ctx := testContext(t)
	l := startLive(t, "DRAINPIPE_DEADLINE_RESERVE=2s")
	n := l.node(ctx, served)
	l.k8s.Deployment(ctx, "db", 2, fixture.PinnedTo(n.Name))
	l.k8s.PDB(ctx, "db", map[string]string{"app": "db"}, fixture.MinAvailable(2))
	hook := awsfake.LifecycleAction{ASG: "e2e-asg", Hook: "drain", Token: "7a1e7b9c-0000-4000-8000-000000000002", InstanceID: fixture.InstanceID(n)}
	l.aws.AddLifecycleAction(hook)
	msg := message{id: "hook-blocked", body: terminateHook(t, hook), receiveCount: 1}

	res := l.invoke(ctx, t, 8*time.Second, msg)
	if diff := cmp.Diff([]string{msg.id}, failedIDs(batchResponse(t, res.Body))); diff != "" {
		t.Fatalf("first delivery: batch item failures (-want +got):\n%s", diff)
	}
	if got := len(l.aws.CallsTo("RecordLifecycleActionHeartbeat")); got == 0 {
		t.Error("the hook was never heartbeated during the blocked drain")
	}
	if got := l.aws.Completed(); len(got) != 0 {
		t.Errorf("hook completed while pods remained: %+v", got)
	}
	if unschedulable, _ := cordoned(l.getNode(ctx, t, n.Name)); !unschedulable {
		t.Error("node not cordoned after the first delivery")
	}

	// The budget is lifted; SQS redelivers the same message.
	if err := l.k8s.Client.PolicyV1().PodDisruptionBudgets(l.k8s.Namespace).Delete(ctx, "db", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	msg.receiveCount = 2
	res = l.invoke(ctx, t, time.Minute, msg)
	if diff := cmp.Diff([]string{}, failedIDs(batchResponse(t, res.Body))); diff != "" {
		t.Errorf("redelivery: batch item failures (-want +got):\n%s", diff)
	}
	if got := l.podsOn(ctx, t, n.Name); len(got) != 0 {
		t.Errorf("pods left on %s: %v", n.Name, got)
	}
	want := []awsfake.Completion{{LifecycleAction: hook, Result: "CONTINUE"}}
	if diff := cmp.Diff(want, l.aws.Completed()); diff != "" {
		t.Errorf("completed lifecycle actions (-want +got):\n%s", diff)
	}
}

// The same event delivered three times ends in the same state with one
// successful completion.
func TestLiveSameEventThreeTimes(t *testing.T) {
	ctx := testContext(t)
	l := startLive(t)
	n := l.node(ctx, served)
	l.k8s.Deployment(ctx, "web", 2, fixture.PinnedTo(n.Name))
	hook := awsfake.LifecycleAction{ASG: "e2e-asg", Hook: "drain", Token: "7a1e7b9c-0000-4000-8000-000000000003", InstanceID: fixture.InstanceID(n)}
	l.aws.AddLifecycleAction(hook)
	ev := terminateHook(t, hook)

	for i := range 3 {
		res := l.invoke(ctx, t, time.Minute, message{id: fmt.Sprintf("dup-%d", i), body: ev})
		if diff := cmp.Diff([]string{}, failedIDs(batchResponse(t, res.Body))); diff != "" {
			t.Errorf("delivery %d: batch item failures (-want +got):\n%s", i, diff)
		}
		unschedulable, tainted := cordoned(l.getNode(ctx, t, n.Name))
		if !unschedulable || !tainted {
			t.Errorf("delivery %d: unschedulable=%v tainted=%v, want both", i, unschedulable, tainted)
		}
		if got := l.podsOn(ctx, t, n.Name); len(got) != 0 {
			t.Errorf("delivery %d: pods left: %v", i, got)
		}
	}
	want := []awsfake.Completion{{LifecycleAction: hook, Result: "CONTINUE"}}
	if diff := cmp.Diff(want, l.aws.Completed()); diff != "" {
		t.Errorf("completed lifecycle actions (-want +got):\n%s", diff)
	}
}

// An instance of a cluster we do not serve (a shared queue) is acknowledged
// and left alone.
func TestLiveForeignClusterIgnored(t *testing.T) {
	ctx := testContext(t)
	l := startLive(t)
	n := l.node(ctx, "someone-elses-cluster")
	l.k8s.Deployment(ctx, "web", 1, fixture.PinnedTo(n.Name))

	res := l.invoke(ctx, t, time.Minute, message{id: "foreign-1", body: spotWarning(t, fixture.InstanceID(n))})

	if diff := cmp.Diff([]string{}, failedIDs(batchResponse(t, res.Body))); diff != "" {
		t.Errorf("batch item failures (-want +got):\n%s", diff)
	}
	if unschedulable, tainted := cordoned(l.getNode(ctx, t, n.Name)); unschedulable || tainted {
		t.Errorf("foreign node touched: unschedulable=%v tainted=%v", unschedulable, tainted)
	}
	if got := l.podsOn(ctx, t, n.Name); len(got) != 1 {
		t.Errorf("pods on the foreign node = %v, want the one left alone", got)
	}
	if !logsContain(l.rt, "foreign-1") {
		t.Error("no log line names the ignored message")
	}
}

// Budget: event received → node cordoned, on a warm function.
func TestLiveBudgetCordonLatency(t *testing.T) {
	ctx := testContext(t)
	l := startLive(t, "DRAINPIPE_ACTION_SPOT=cordon")
	warm, n := l.node(ctx, served), l.node(ctx, served)
	l.invoke(ctx, t, time.Minute, message{id: "warm-up", body: spotWarning(t, fixture.InstanceID(warm))})

	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	seen := l.watchCordon(wctx, t, n.Name)
	start := time.Now()
	l.invoke(ctx, t, time.Minute, message{id: "measured", body: spotWarning(t, fixture.InstanceID(n))})
	select {
	case at := <-seen:
		t.Logf("budget: event received -> node cordoned (warm): %v (target <= 50ms)", at.Sub(start))
	case <-ctx.Done():
		t.Fatal("node never seen cordoned")
	}
}
