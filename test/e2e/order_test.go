package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// dated sets an event's time.
func dated(at time.Time) func(map[string]any) {
	return func(ev map[string]any) { ev["time"] = at.UTC().Format(time.RFC3339) }
}

// both applies edits in order.
func both(edits ...func(map[string]any)) func(map[string]any) {
	return func(ev map[string]any) {
		for _, e := range edits {
			e(ev)
		}
	}
}

// A reordered delivery through the real bootstrap: the instance's running
// notice, dated a minute before the Spot warning, arrives after it. The
// node stays held for the Spot warning, and the record ends with the reason.
func TestLiveOlderRunningAfterSpotWarningKeepsHold(t *testing.T) {
	ctx := testContext(t)
	l := startLive(t)
	n := l.node(ctx, served)
	id := fixture.InstanceID(n)
	l.aws.AddInstances(awsfake.Instance{ID: id, PrivateDNSName: n.Name, AvailabilityZone: n.Labels[corev1.LabelTopologyZone],
		Lifecycle: "spot", Tags: map[string]string{"eks:cluster-name": served}, State: "running",
		LaunchTime: time.Now().Add(-time.Hour)})
	now := time.Now()
	warn := freshEvent(t, "eventbridge-spot-interruption.json", both(forEC2Instance(id, awsfake.Region), dated(now)))
	l.invoke(ctx, t, time.Minute, message{id: "spot", body: warn})
	if got := recordLogs(l.rt)["spot"]; got.Outcome != "done" {
		t.Fatalf("spot warning logged as %+v, want done", got)
	}
	older := freshEvent(t, "eventbridge-state-change-stopping.json", both(forEC2Instance(id, awsfake.Region),
		func(ev map[string]any) { ev["detail"].(map[string]any)["state"] = "running" }, dated(now.Add(-time.Minute))))
	l.invoke(ctx, t, time.Minute, message{id: "running", body: older})

	if got := recordLogs(l.rt)["running"]; got.Outcome != "ignored" || !strings.Contains(got.Reason, "overtaken") {
		t.Errorf("older running notice logged as %+v, want ignored as overtaken", got)
	}
	held := l.getNode(ctx, t, n.Name)
	if unschedulable, tainted := cordoned(held); !unschedulable || !tainted {
		t.Errorf("node after the older running notice: unschedulable %v, tainted %v; want still held", unschedulable, tainted)
	}
}

// A launch hook of a warm-pool instance leaving the pool, batched with its
// running notice, after its stopped notice left the node cordoned and out
// of service: the node is given back, then the hook is completed.
func TestLiveLaunchWithRunningGivesNodeBack(t *testing.T) {
	ctx := testContext(t)
	l := startLive(t, "DRAINPIPE_ASG_NAMES=e2e-asg")
	n := l.node(ctx, served)
	id := fixture.InstanceID(n)
	inst := awsfake.Instance{ID: id, PrivateDNSName: n.Name, AvailabilityZone: n.Labels[corev1.LabelTopologyZone],
		Tags: map[string]string{"eks:cluster-name": served, "aws:autoscaling:groupName": "e2e-asg"}, State: "stopped",
		LaunchTime: time.Now().Add(-time.Hour)}
	l.aws.AddInstances(inst)
	l.invoke(ctx, t, time.Minute, message{id: "stopped", body: stateChange(t, id, "stopped")})
	if got := drainpipeTrace(l.getNode(ctx, t, n.Name)); !strings.Contains(strings.Join(got, ","), "out-of-service") {
		t.Fatalf("after the stop: Drainpipe marks %v, want out of service", got)
	}

	inst.State = "running"
	l.aws.AddInstances(inst)
	hook := awsfake.LifecycleAction{ASG: "e2e-asg", Hook: "drainpipe-launch", Token: "7a1e7b9c-0000-4000-8000-00000000bb01", InstanceID: id}
	l.aws.AddLifecycleAction(hook)
	later := time.Now().Add(time.Second)
	launch := freshEvent(t, "eventbridge-asg-launch-lifecycle.json", both(forLifecycle(id, hook.ASG, hook.Hook, hook.Token, awsfake.Region),
		func(ev map[string]any) {
			d := ev["detail"].(map[string]any)
			d["Origin"], d["Destination"] = "WarmPool", "AutoScalingGroup"
		}, dated(later)))
	running := freshEvent(t, "eventbridge-state-change-stopping.json", both(forEC2Instance(id, awsfake.Region),
		func(ev map[string]any) { ev["detail"].(map[string]any)["state"] = "running" }, dated(later)))
	res := l.invoke(ctx, t, time.Minute, message{id: "launch", body: launch}, message{id: "running", body: running})

	if failed := failedIDs(batchResponse(t, res.Body)); len(failed) != 0 {
		t.Errorf("batch item failures %v, want none", failed)
	}
	if left := drainpipeTrace(l.getNode(ctx, t, n.Name)); len(left) > 0 {
		t.Errorf("Drainpipe left %v on the node", left)
	}
	want := []awsfake.Completion{{LifecycleAction: hook, Result: "CONTINUE"}}
	if diff := cmp.Diff(want, l.aws.Completed()); diff != "" {
		t.Errorf("completed lifecycle actions (-want +got):\n%s", diff)
	}
	if got := recordLogs(l.rt)["launch"]; !strings.Contains(got.Reason, "gave node") || !strings.Contains(got.Reason, "is Ready") {
		t.Errorf("launch record logged as %+v, want the node given back, then Ready", got)
	}
}

// A launch into the warm pool is completed at once: the instance stops
// there and no node of it will be Ready.
func TestLiveLaunchIntoWarmPoolCompletesAtOnce(t *testing.T) {
	ctx := testContext(t)
	l := startLive(t, "DRAINPIPE_ASG_NAMES=e2e-asg")
	id := "i-0e2e00000000000b1"
	l.aws.AddInstances(awsfake.Instance{ID: id, LaunchTime: time.Now(), State: "pending",
		Tags: map[string]string{"eks:cluster-name": served, "aws:autoscaling:groupName": "e2e-asg"}})
	hook := awsfake.LifecycleAction{ASG: "e2e-asg", Hook: "drainpipe-launch", Token: "7a1e7b9c-0000-4000-8000-00000000bb02", InstanceID: id}
	l.aws.AddLifecycleAction(hook)
	body := freshEvent(t, "eventbridge-asg-launch-warm-pool.json", forLifecycle(id, hook.ASG, hook.Hook, hook.Token, awsfake.Region))
	res := l.invoke(ctx, t, time.Minute, message{id: "warm", body: body})

	if failed := failedIDs(batchResponse(t, res.Body)); len(failed) != 0 {
		t.Errorf("batch item failures %v, want none", failed)
	}
	want := []awsfake.Completion{{LifecycleAction: hook, Result: "CONTINUE"}}
	if diff := cmp.Diff(want, l.aws.Completed()); diff != "" {
		t.Errorf("completed lifecycle actions (-want +got):\n%s", diff)
	}
	if got := recordLogs(l.rt)["warm"]; got.Outcome != "done" || !strings.Contains(got.Reason, "warm pool") {
		t.Errorf("record logged as %+v, want done: into the warm pool", got)
	}
}

// A served group's hook owned by another tool (log shipping) is left
// alone: never heartbeated nor completed, and the node is not drained.
func TestLiveOtherToolsHookLeftAlone(t *testing.T) {
	ctx := testContext(t)
	l := startLive(t, "DRAINPIPE_ASG_NAMES=e2e-asg", "DRAINPIPE_LIFECYCLE_HOOK_NAMES=drainpipe")
	n := l.node(ctx, served)
	hook := awsfake.LifecycleAction{ASG: "e2e-asg", Hook: "ship-logs", Token: "7a1e7b9c-0000-4000-8000-00000000bb03",
		InstanceID: fixture.InstanceID(n)}
	l.aws.AddLifecycleAction(hook)
	res := l.invoke(ctx, t, time.Minute, message{id: "other", body: terminateHook(t, hook)})

	if failed := failedIDs(batchResponse(t, res.Body)); len(failed) != 0 {
		t.Errorf("batch item failures %v, want none", failed)
	}
	if got := l.aws.Completed(); len(got) != 0 {
		t.Errorf("another tool's hook completed: %+v", got)
	}
	if got := recordLogs(l.rt)["other"]; got.Outcome != "ignored" || !strings.Contains(got.Reason, "DRAINPIPE_LIFECYCLE_HOOK_NAMES") {
		t.Errorf("record logged as %+v, want ignored: another tool's hook", got)
	}
	if unschedulable, tainted := cordoned(l.getNode(ctx, t, n.Name)); unschedulable || tainted {
		t.Error("node cordoned for another tool's hook")
	}
}
