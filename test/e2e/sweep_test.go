package e2e

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// sweepRule is the schedule rule the stack would create; its Scheduled
// Events are sweeps.
const sweepRule = "arn:aws:events:" + awsfake.Region + ":" + queueAccount + ":rule/drainpipe-sweep"

// heldLabel is the label on every node Drainpipe holds (drain.LabelHeld).
const heldLabel = "drainpipe.dev/held"

// sweepEnv turns the sweep on. Its margin is 0: a test cannot wait the
// 10 minutes a threat must be over by, and the bootstrap's clock is the
// real one; the margin itself is judged in internal/sweep.
var sweepEnv = []string{"DRAINPIPE_SWEEP_RULE=" + sweepRule, "DRAINPIPE_SWEEP_MARGIN=0s"}

// sweepEvent is the schedule rule's Scheduled Event, fresh and unique.
func sweepEvent(t *testing.T) []byte {
	return freshEvent(t, "eventbridge-scheduled-sweep.json", func(ev map[string]any) {
		ev["region"], ev["resources"], ev["id"] = awsfake.Region, []any{sweepRule}, newEventID()
	})
}

func newEventID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// repairLog is one "sweep repaired a node" line.
type repairLog struct {
	Node, Repair, Reason string
}

// sweep sends one sweep (message id) and returns its record's log line
// and the repairs its invocation logged.
func (l *live) sweep(ctx context.Context, t *testing.T, id string) (recordLog, []repairLog) {
	t.Helper()
	res := l.invoke(ctx, t, time.Minute, message{id: id, body: sweepEvent(t)})
	if failed := failedIDs(batchResponse(t, res.Body)); len(failed) > 0 {
		t.Fatalf("sweep %s failed: %+v", id, recordLogs(l.rt)[id])
	}
	reps := []repairLog{}
	for _, rec := range l.rt.Records() {
		if rec["msg"] != "sweep repaired a node" || rec["request_id"] != res.RequestID {
			continue
		}
		node, _ := rec["node"].(string)
		what, _ := rec["repair"].(string)
		reason, _ := rec["reason"].(string)
		reps = append(reps, repairLog{Node: node, Repair: what, Reason: reason})
	}
	return recordLogs(l.rt)[id], reps
}

// setState puts the instance behind node n in state in EC2.
func (l *live) setState(t *testing.T, n *corev1.Node, state string) {
	t.Helper()
	if !l.aws.SetInstanceState(fixture.InstanceID(n), state) {
		t.Fatalf("EC2 does not know the instance of %s", n.Name)
	}
}

// checkGivenBack reports an error unless node is schedulable with no
// Drainpipe trace and no held label.
func (l *live) checkGivenBack(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	n := l.getNode(ctx, t, name)
	if n.Spec.Unschedulable || len(drainpipeTrace(n)) > 0 || n.Labels[heldLabel] != "" {
		t.Errorf("node %s: unschedulable %v, Drainpipe marks %v, held label %q; want it given back",
			name, n.Spec.Unschedulable, drainpipeTrace(n), n.Labels[heldLabel])
	}
}

// A stop whose running notice is lost: the node stays cordoned and out of
// service while the instance is stopped (the first sweep leaves it), and
// the first sweep after it runs again gives it back, logging why.
func TestSweepGivesBackNodeWhoseRunningNoticeWasLost(t *testing.T) {
	ctx := testContext(t)
	l := startLive(t, sweepEnv...)
	n := l.node(ctx, served)
	l.setState(t, n, "stopped")
	res := l.invoke(ctx, t, time.Minute, message{id: "stopped", body: stateChange(t, fixture.InstanceID(n), "stopped")})
	if failed := failedIDs(batchResponse(t, res.Body)); len(failed) > 0 {
		t.Fatalf("stopped notice failed: %+v", recordLogs(l.rt)["stopped"])
	}
	if held := l.getNode(ctx, t, n.Name); !held.Spec.Unschedulable || held.Labels[heldLabel] != "true" {
		t.Fatalf("after the stop: unschedulable %v, held label %q; want cordoned and labelled", held.Spec.Unschedulable, held.Labels[heldLabel])
	}

	if rec, reps := l.sweep(ctx, t, "sweep-stopped"); len(reps) > 0 || rec.Outcome != "done" {
		t.Errorf("sweep while the instance is stopped: %+v, repairs %+v; want done, none", rec, reps)
	}
	if !l.getNode(ctx, t, n.Name).Spec.Unschedulable {
		t.Fatal("the sweep gave the node back while its instance was stopped")
	}

	l.setState(t, n, "running") // the running notice never comes
	rec, reps := l.sweep(ctx, t, "sweep-running")
	if len(reps) != 1 || reps[0].Node != n.Name || reps[0].Repair != "given-back" || !strings.Contains(reps[0].Reason, "running notice was lost") {
		t.Errorf("repairs %+v, want %s given back because the running notice was lost", reps, n.Name)
	}
	if rec.Outcome != "done" || !strings.Contains(rec.Reason, "1 given back") {
		t.Errorf("sweep record logged as %+v, want done, 1 given back", rec)
	}
	l.checkGivenBack(ctx, t, n.Name)
}

// A Spot warning whose instance EC2 never took: long past its deadline the
// instance still runs, and the sweep gives the node back with that reason.
func TestSweepGivesBackSpotNodeEC2NeverTook(t *testing.T) {
	ctx := testContext(t)
	l := startLive(t, sweepEnv...)
	n := l.node(ctx, served)
	id := fixture.InstanceID(n)
	warned := time.Now().Add(-5 * time.Minute) // its deadline passed 3 minutes ago
	spot := freshEvent(t, "eventbridge-spot-interruption.json", both(forEC2Instance(id, awsfake.Region), dated(warned)))
	l.invoke(ctx, t, time.Minute, message{id: "spot", body: spot})
	if held := l.getNode(ctx, t, n.Name); !held.Spec.Unschedulable || held.Labels[heldLabel] != "true" {
		t.Fatalf("after the late Spot warning: unschedulable %v, held label %q; want held (record %+v)",
			held.Spec.Unschedulable, held.Labels[heldLabel], recordLogs(l.rt)["spot"])
	}

	_, reps := l.sweep(ctx, t, "sweep")
	if len(reps) != 1 || reps[0].Repair != "given-back" ||
		!strings.Contains(reps[0].Reason, "after its spot-interruption deadline: EC2 did not take it") {
		t.Errorf("repairs %+v, want the node given back: EC2 did not take it", reps)
	}
	l.checkGivenBack(ctx, t, n.Name)
}

// An instance stopped with no notice at all (the rule missing, the function
// failing): the sweep taints its node out of service, as the state change
// would have, and once it runs again the next sweep gives the node back.
func TestSweepTaintsNodeOfInstanceStoppedWithoutNotice(t *testing.T) {
	ctx := testContext(t)
	l := startLive(t, sweepEnv...)
	n := l.node(ctx, served)
	l.setState(t, n, "stopped")

	_, reps := l.sweep(ctx, t, "sweep-stopped")
	if len(reps) != 1 || reps[0].Node != n.Name || reps[0].Repair != "out-of-service" || !strings.Contains(reps[0].Reason, "no notice") {
		t.Errorf("repairs %+v, want %s tainted out of service: no notice came", reps, n.Name)
	}
	got := l.getNode(ctx, t, n.Name)
	if !slices.Contains(drainpipeTrace(got), "taint node.kubernetes.io/out-of-service") || got.Labels[heldLabel] != "true" {
		t.Fatalf("after the sweep: Drainpipe marks %v, held label %q; want out of service and held", drainpipeTrace(got), got.Labels[heldLabel])
	}

	l.setState(t, n, "running")
	if _, reps := l.sweep(ctx, t, "sweep-running"); len(reps) != 1 || reps[0].Repair != "given-back" {
		t.Errorf("repairs once the instance runs: %+v, want the node given back", reps)
	}
	l.checkGivenBack(ctx, t, n.Name)
}

// healthRetirement is AWS Health's notice of an instance retirement
// starting at start, for instance id.
func healthRetirement(t *testing.T, id string, start time.Time) []byte {
	const code = "AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED"
	return freshEvent(t, "eventbridge-health-scheduled-change.json", func(ev map[string]any) {
		ev["region"], ev["resources"], ev["id"] = awsfake.Region, []any{id}, newEventID()
		d := ev["detail"].(map[string]any)
		d["eventRegion"] = awsfake.Region
		d["eventArn"] = "arn:aws:health:" + awsfake.Region + "::event/EC2/" + code + "/" + code + "_E2E"
		d["startTime"] = start.UTC().Format(http.TimeFormat)
		d["endTime"] = start.Add(2 * time.Hour).UTC().Format(http.TimeFormat)
		d["affectedEntities"] = []any{map[string]any{"entityValue": id}}
	})
}

// A scheduled retirement that only DescribeInstanceStatus shows (no Health
// notice came): the sweep drains the node once; the Health notice that
// turns up later for the same event, and the next sweep, leave it.
func TestSweepDrainsScheduledRetirementOnce(t *testing.T) {
	ctx := testContext(t)
	l := startLive(t, sweepEnv...)
	n := l.node(ctx, served)
	id := fixture.InstanceID(n)
	l.k8s.Deployment(ctx, "web", 2, fixture.OnNode(n.Name))
	start := time.Now().Add(3 * time.Hour).Truncate(time.Second)
	l.aws.AddScheduledEvents(awsfake.ScheduledEvent{InstanceID: id, ID: "instance-event-0e2e0000000000001",
		Code: "instance-retirement", Description: "The instance is running on degraded hardware", NotBefore: start})

	_, reps := l.sweep(ctx, t, "sweep-1")
	if len(reps) != 1 || reps[0].Node != n.Name || reps[0].Repair != "scheduled-event" || !strings.Contains(reps[0].Reason, "instance-retirement") {
		t.Errorf("repairs %+v, want %s drained for its instance-retirement", reps, n.Name)
	}
	l.checkNode(ctx, t, n.Name, true, 0)
	acted := l.getNode(ctx, t, n.Name).Annotations["acted.drainpipe.dev/scheduled-events"]
	if !strings.Contains(acted, "instance-retirement@"+start.UTC().Format(time.RFC3339)) {
		t.Errorf("acted record %q does not name the retirement at %s", acted, start.UTC().Format(time.RFC3339))
	}

	l.invoke(ctx, t, time.Minute, message{id: "health", body: healthRetirement(t, id, start)})
	if got := recordLogs(l.rt)["health"]; got.Outcome != "ignored" || !strings.Contains(got.Reason, "not acted on twice") {
		t.Errorf("Health notice for the same retirement logged as %+v, want ignored: not acted on twice", got)
	}
	if _, reps := l.sweep(ctx, t, "sweep-2"); len(reps) > 0 {
		t.Errorf("second sweep repaired %+v, want nothing: the retirement was acted on", reps)
	}
	l.checkNode(ctx, t, n.Name, true, 0)
}

// A node whose Spot drain is under way (a budget holds its last pod, the
// deadline ahead) and a node an operator cordoned: the sweep touches
// neither, and says why it left the held one.
func TestSweepLeavesDrainInProgressAndOperatorCordon(t *testing.T) {
	ctx := testContext(t)
	// A 10 s function with a 2 s reserve: the blocked drain gives up
	// within seconds and is retried, still in progress.
	l := startLive(t, slices.Concat(sweepEnv, []string{"DRAINPIPE_DEADLINE_RESERVE=2s"})...)
	nodes := l.nodes(ctx, 2, served)
	draining, operators := nodes[0], nodes[1]
	l.k8s.Deployment(ctx, "db", 1, fixture.PinnedTo(draining.Name))
	l.k8s.PDB(ctx, "db", map[string]string{"app": "db"}, fixture.MinAvailable(1))
	l.k8s.Cordon(ctx, operators.Name, true)
	spot := freshEvent(t, "eventbridge-spot-interruption.json", forEC2Instance(fixture.InstanceID(draining), awsfake.Region))
	res := l.invoke(ctx, t, 10*time.Second, message{id: "spot", body: spot})
	if diff := cmp.Diff([]string{"spot"}, failedIDs(batchResponse(t, res.Body))); diff != "" {
		t.Fatalf("the blocked drain should be retried (-want +got):\n%s", diff)
	}
	before := map[string]*corev1.Node{draining.Name: l.getNode(ctx, t, draining.Name), operators.Name: l.getNode(ctx, t, operators.Name)}

	rec, reps := l.sweep(ctx, t, "sweep")
	if len(reps) > 0 || rec.Outcome != "done" {
		t.Errorf("sweep: %+v, repairs %+v; want done and nothing repaired", rec, reps)
	}
	for name, was := range before {
		if now := l.getNode(ctx, t, name); !sameSpec(was, now) {
			t.Errorf("node %s changed under the sweep: %+v → %+v", name, was.Spec, now.Spec)
		}
	}
	if !l.getNode(ctx, t, operators.Name).Spec.Unschedulable {
		t.Error("the operator's cordon was undone")
	}
	left, _, ok := logLine(t, l.rt, map[string]string{"msg": "sweep: held node left as it is", "node": draining.Name})
	if !ok || !strings.Contains(fmt.Sprint(left["reason"]), "drain may be in progress") {
		t.Errorf("no log line leaving %s with its reason (got %v)", draining.Name, left)
	}
	if _, _, ok := logLine(t, l.rt, map[string]string{"node": operators.Name, "msg": "sweep: held node left as it is"}); ok {
		t.Error("the operator-cordoned node was judged: it should not even be listed")
	}
}

// sameSpec compares what the sweep could change on a node (kubelet's
// status updates bump the resourceVersion too).
func sameSpec(a, b *corev1.Node) bool {
	return cmp.Equal(a.Spec, b.Spec) && cmp.Equal(a.Labels, b.Labels) && cmp.Equal(a.Annotations, b.Annotations)
}
