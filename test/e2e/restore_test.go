package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// excludeLabel is the load-balancer exclusion label a cordon sets.
const excludeLabel = "node.kubernetes.io/exclude-from-external-load-balancers"

func stateChange(t *testing.T, instanceID, state string) []byte {
	return freshEvent(t, "eventbridge-state-change-stopping.json", func(ev map[string]any) {
		forEC2Instance(instanceID, awsfake.Region)(ev)
		ev["detail"].(map[string]any)["state"] = state
	})
}

// drainpipeTrace lists what of Drainpipe a node carries: its taints, the
// out-of-service taint, its annotations.
func drainpipeTrace(n *corev1.Node) []string {
	var left []string
	for _, tn := range n.Spec.Taints {
		if tn.Key == taintKey || tn.Key == "node.kubernetes.io/out-of-service" {
			left = append(left, "taint "+tn.Key)
		}
	}
	for k := range n.Annotations {
		if strings.HasPrefix(k, "drainpipe.dev/") {
			left = append(left, "annotation "+k)
		}
	}
	return left
}

// A stop → running cycle through the real bootstrap: the stopped instance's
// node is cordoned, drained and tainted out of service; when EC2 reports it
// running again the node is schedulable, its exclusion label back at the
// operator's value, and no Drainpipe trace is left.
func TestLiveStopThenRunningGivesNodeBack(t *testing.T) {
	ctx := testContext(t)
	l := startLive(t)
	n := l.node(ctx, served)
	patch := []byte(`{"metadata":{"labels":{"` + excludeLabel + `":"false"}}}`)
	if _, err := l.k8s.Client.CoreV1().Nodes().Patch(ctx, n.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	l.k8s.Deployment(ctx, "web", 2, fixture.OnNode(n.Name))
	id := fixture.InstanceID(n)
	inst := awsfake.Instance{ID: id, PrivateDNSName: n.Name, AvailabilityZone: n.Labels[corev1.LabelTopologyZone],
		Lifecycle: "spot", Tags: map[string]string{"eks:cluster-name": served}, State: "stopped",
		LaunchTime: time.Now().Add(-time.Hour)}
	l.aws.AddInstances(inst)

	res := l.invoke(ctx, t, time.Minute, message{id: "stopped", body: stateChange(t, id, "stopped")})
	if diff := cmp.Diff([]string{}, failedIDs(batchResponse(t, res.Body))); diff != "" {
		t.Fatalf("batch item failures after the stop (-want +got):\n%s", diff)
	}
	stopped := l.getNode(ctx, t, n.Name)
	if got := drainpipeTrace(stopped); !stopped.Spec.Unschedulable || !strings.Contains(strings.Join(got, ","), "out-of-service") {
		t.Fatalf("after the stop: unschedulable %v, Drainpipe marks %v; want cordoned and out of service", stopped.Spec.Unschedulable, got)
	}

	inst.State, inst.LaunchTime = "running", time.Now()
	l.aws.AddInstances(inst)
	// Dated after the stop: a restore no later than the threat is overtaken.
	running := freshEvent(t, "eventbridge-state-change-stopping.json", both(forEC2Instance(id, awsfake.Region),
		func(ev map[string]any) { ev["detail"].(map[string]any)["state"] = "running" }, dated(time.Now().Add(time.Second))))
	res = l.invoke(ctx, t, time.Minute, message{id: "running", body: running})
	if diff := cmp.Diff([]string{}, failedIDs(batchResponse(t, res.Body))); diff != "" {
		t.Errorf("batch item failures after the start (-want +got):\n%s", diff)
	}
	if got := recordLogs(l.rt)["running"]; got.Outcome != "done" || !strings.Contains(got.Reason, "gave node") {
		t.Errorf("running record logged as %+v, want done, node given back", got)
	}
	back := l.getNode(ctx, t, n.Name)
	if back.Spec.Unschedulable {
		t.Error("node still unschedulable")
	}
	if got := back.Labels[excludeLabel]; got != "false" {
		t.Errorf("exclusion label = %q, want the operator's \"false\"", got)
	}
	if left := drainpipeTrace(back); len(left) > 0 {
		t.Errorf("Drainpipe left %v on the node", left)
	}
}

// A running state change for an instance whose node Drainpipe never
// touched is ignored, and writes nothing.
func TestLiveRunningWithoutDrainpipeMarksIgnored(t *testing.T) {
	ctx := testContext(t)
	l := startLive(t)
	n := l.node(ctx, served)
	l.k8s.Cordon(ctx, n.Name, true) // an operator's cordon: not Drainpipe's to undo

	l.invoke(ctx, t, time.Minute, message{id: "running", body: stateChange(t, fixture.InstanceID(n), "running")})

	if got := recordLogs(l.rt)["running"]; got.Outcome != "ignored" || !strings.Contains(got.Reason, "no Drainpipe marks") {
		t.Errorf("record logged as %+v, want ignored: no Drainpipe marks", got)
	}
	after := l.getNode(ctx, t, n.Name)
	if !after.Spec.Unschedulable || len(drainpipeTrace(after)) > 0 {
		t.Errorf("node changed: unschedulable %v, Drainpipe marks %v; want the operator's cordon alone",
			after.Spec.Unschedulable, drainpipeTrace(after))
	}
}
