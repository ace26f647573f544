package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/lambdart"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// probeCompletions puts a completion probe in front of the Auto Scaling
// fake that lists the pods left on node; start the function with the
// returned environment entry to route its hook calls through it.
func (l *live) probeCompletions(t *testing.T, node string) (*completionProbe, string) {
	p := newCompletionProbe(t, l.aws.URL(), func(ctx context.Context) ([]string, error) {
		return podsOnNode(ctx, l.k8s.Client, node)
	})
	return p, "AWS_ENDPOINT_URL_AUTO_SCALING=" + p.URL()
}

// drainedBeforeCompletion wants every completion request to have found the
// node empty.
func drainedBeforeCompletion(t *testing.T, p *completionProbe, wantCalls int) {
	t.Helper()
	want := make([]snapshot, wantCalls)
	for i := range want {
		want[i] = snapshot{Pods: []string{}}
	}
	if diff := cmp.Diff(want, p.Snapshots()); diff != "" {
		t.Errorf("pods on the node when CompleteLifecycleAction arrived (-want +got):\n%s", diff)
	}
}

func TestLiveLifecycleHookDrainedThenCompleted(t *testing.T) {
	ctx := testContext(t)
	l := newLive(t)
	n := l.node(ctx, served)
	l.k8s.Deployment(ctx, "web", 2, fixture.PinnedTo(n.Name))
	hook := l.pendingHook(n, "7a1e7b9c-0000-4000-8000-000000000001")
	probe, env := l.probeCompletions(t, n.Name)
	l.start(t, env)

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
	drainedBeforeCompletion(t, probe, 1)
}

// A drain a PDB blocks outlasts a short invocation: the record comes back
// for redelivery, made visible again after DRAINPIPE_RETRY_DELAY instead of
// the queue's visibility timeout, the hook is heartbeated, and the next
// delivery finishes.
func TestLiveBlockedDrainResumesOnRedelivery(t *testing.T) {
	ctx := testContext(t)
	l := newLive(t)
	n := l.node(ctx, served)
	l.k8s.Deployment(ctx, "db", 2, fixture.PinnedTo(n.Name))
	l.k8s.PDB(ctx, "db", map[string]string{"app": "db"}, fixture.MinAvailable(2))
	hook := l.pendingHook(n, "7a1e7b9c-0000-4000-8000-000000000002")
	probe, env := l.probeCompletions(t, n.Name)
	// An 8 s function with a 2 s reserve: the drain gets about a second.
	l.start(t, env, "DRAINPIPE_DEADLINE_RESERVE=2s")
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
	if got := l.podsOn(ctx, t, n.Name); len(got) != 2 {
		t.Errorf("pods on %s after the blocked delivery = %v, want the two the budget protects", n.Name, got)
	}
	// Redelivery is hastened: one visibility change, of the first delivery's
	// receipt, to the default delay of 15 s.
	hastened := []awsfake.VisibilityChange{{QueueURL: l.queue, ReceiptHandle: l.receipt(msg.id), Timeout: 15}}
	if diff := cmp.Diff(hastened, l.aws.VisibilityChanges()); diff != "" {
		t.Errorf("visibility changes after the blocked delivery (-want +got):\n%s", diff)
	}
	if n := len(l.aws.CallsTo("ChangeMessageVisibilityBatch")); n != 1 {
		t.Errorf("%d ChangeMessageVisibilityBatch calls, want 1", n)
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
	drainedBeforeCompletion(t, probe, 1)
	// A finished record is deleted by SQS, not delayed.
	if diff := cmp.Diff(hastened, l.aws.VisibilityChanges()); diff != "" {
		t.Errorf("visibility changes after the redelivery (-want +got):\n%s", diff)
	}
	// One summary line per delivery, each with its receive count.
	var got []string
	for _, rec := range l.rt.Records() {
		if rec["msg"] == "record handled" && rec["message_id"] == msg.id {
			got = append(got, fmt.Sprintf("%v:%v", rec["receive_count"], rec["outcome"]))
		}
	}
	if diff := cmp.Diff([]string{"1:retry", "2:done"}, got); diff != "" {
		t.Errorf("deliveries logged as receive_count:outcome (-want +got):\n%s", diff)
	}
}

// The same event delivered three times in a row ends in the same state
// with one successful completion.
func TestLiveSameEventThreeTimes(t *testing.T) {
	ctx := testContext(t)
	l := startLive(t)
	n := l.node(ctx, served)
	l.k8s.Deployment(ctx, "web", 2, fixture.PinnedTo(n.Name))
	hook := l.pendingHook(n, "7a1e7b9c-0000-4000-8000-000000000003")
	ev := terminateHook(t, hook)

	for i := range 3 {
		res := l.invoke(ctx, t, time.Minute, message{id: fmt.Sprintf("dup-%d", i), body: ev})
		if diff := cmp.Diff([]string{}, failedIDs(batchResponse(t, res.Body))); diff != "" {
			t.Errorf("delivery %d: batch item failures (-want +got):\n%s", i, diff)
		}
		l.checkNode(ctx, t, n.Name, true, 0)
	}
	want := []awsfake.Completion{{LifecycleAction: hook, Result: "CONTINUE"}}
	if diff := cmp.Diff(want, l.aws.Completed()); diff != "" {
		t.Errorf("completed lifecycle actions (-want +got):\n%s", diff)
	}
}

// The same event delivered three times at once, twice in one batch and
// once to a second execution environment, ends in the same state with
// one successful completion, none of them before the node was empty.
func TestLiveSameEventConcurrently(t *testing.T) {
	ctx := testContext(t)
	l := newLive(t)
	n := l.node(ctx, served)
	l.k8s.Deployment(ctx, "web", 4, fixture.PinnedTo(n.Name))
	hook := l.pendingHook(n, "7a1e7b9c-0000-4000-8000-000000000004")
	probe, env := l.probeCompletions(t, n.Name)
	first, second := l.start(t, env), l.start(t, env)
	ev := terminateHook(t, hook)
	batches := []struct {
		rt   *lambdart.Runtime
		body []byte
	}{
		{first, l.batch(t, message{id: "dup-a", body: ev}, message{id: "dup-b", body: ev})},
		{second, l.batch(t, message{id: "dup-c", body: ev})},
	}

	results := make([]lambdart.Response, len(batches))
	errs := make([]error, len(batches))
	var wg sync.WaitGroup
	for i, b := range batches {
		wg.Go(func() { results[i], errs[i] = send(ctx, b.rt, b.body, time.Minute) })
	}
	wg.Wait()

	outcomes := map[string]string{}
	for i, b := range batches {
		if errs[i] != nil {
			t.Fatalf("runtime %d: %v", i, errs[i])
		}
		if diff := cmp.Diff([]string{}, failedIDs(batchResponse(t, results[i].Body))); diff != "" {
			t.Errorf("runtime %d: batch item failures (-want +got):\n%s", i, diff)
		}
		for id, r := range recordLogs(b.rt) {
			outcomes[id] = r.Outcome
		}
	}
	if diff := cmp.Diff(map[string]string{"dup-a": "done", "dup-b": "done", "dup-c": "done"}, outcomes); diff != "" {
		t.Errorf("record outcomes (-want +got):\n%s", diff)
	}
	l.checkNode(ctx, t, n.Name, true, 0)
	want := []awsfake.Completion{{LifecycleAction: hook, Result: "CONTINUE"}}
	if diff := cmp.Diff(want, l.aws.Completed()); diff != "" {
		t.Errorf("successful completions (-want +got):\n%s", diff)
	}
	// One completion per execution environment at most (the batch's two
	// records make one task); a late one finds the action gone.
	calls := len(l.aws.CallsTo("CompleteLifecycleAction"))
	if calls < 1 || calls > 2 {
		t.Errorf("CompleteLifecycleAction calls = %d, want 1 or 2", calls)
	}
	drainedBeforeCompletion(t, probe, calls)
}

// On the last delivery before the dead-letter queue (receive count 5, the
// queue's maxReceiveCount) the hook is completed even though the drain is
// blocked, so the instance is not held until the hook times out; the
// record still fails so the DLQ shows the unfinished drain.
func TestLiveLastDeliveryCompletesBlockedHook(t *testing.T) {
	ctx := testContext(t)
	l := newLive(t)
	n := l.node(ctx, served)
	l.k8s.Deployment(ctx, "db", 2, fixture.PinnedTo(n.Name))
	l.k8s.PDB(ctx, "db", map[string]string{"app": "db"}, fixture.MinAvailable(2))
	hook := l.pendingHook(n, "7a1e7b9c-0000-4000-8000-000000000005")
	probe, env := l.probeCompletions(t, n.Name)
	l.start(t, env, "DRAINPIPE_DEADLINE_RESERVE=2s", "DRAINPIPE_MAX_RECEIVE_COUNT=5")
	msg := message{id: "hook-last", body: terminateHook(t, hook), receiveCount: 5}

	res := l.invoke(ctx, t, 8*time.Second, msg)

	if diff := cmp.Diff([]string{msg.id}, failedIDs(batchResponse(t, res.Body))); diff != "" {
		t.Errorf("batch item failures (-want +got):\n%s", diff)
	}
	want := []awsfake.Completion{{LifecycleAction: hook, Result: "CONTINUE"}}
	if diff := cmp.Diff(want, l.aws.Completed()); diff != "" {
		t.Errorf("completed lifecycle actions (-want +got):\n%s", diff)
	}
	// The probe saw the two protected pods still there: the completion
	// came before the drain could finish, as it must here.
	shots := probe.Snapshots()
	if len(shots) != 1 || len(shots[0].Pods) != 2 {
		t.Errorf("pods on the node at completion = %+v, want one completion seeing the 2 pods", shots)
	}
	if !logsContain(l.rt, `"level":"ERROR"`, "completing lifecycle hook before drain finished") {
		t.Error("no error log for the hook completed before its drain finished")
	}
}
