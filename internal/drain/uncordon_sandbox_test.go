package drain_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// trace lists what of Drainpipe is left on a node: its taints, its
// annotations, and the exclusion label with its value.
func trace(t *testing.T, ctx context.Context, s *scene, name string) (*corev1.Node, []string) {
	t.Helper()
	node, err := s.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, tn := range node.Spec.Taints {
		if tn.Key == drain.TaintKey || tn.Key == drain.OutOfServiceTaintKey {
			left = append(left, "taint "+tn.Key)
		}
	}
	for k := range node.Annotations {
		if strings.HasPrefix(k, "drainpipe.dev/") {
			left = append(left, "annotation "+k)
		}
	}
	return node, left
}

// A cordon given back leaves the node as it was before: schedulable, the
// exclusion label back at its previous value, no Drainpipe taint or
// annotation; giving it back again writes nothing.
func TestUncordonRestoresExactly(t *testing.T) {
	s, d := newScene(t, drain.DefaultConfig())
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	node := s.env.Node(ctx, fixture.NodeOptions{Labels: map[string]string{drain.ExcludeFromLBLabel: "false"}})
	if _, err := d.Run(ctx, drain.Request{Node: node.Name, Kind: "state-change", EventID: "ev-stop"}); err != nil {
		t.Fatal(err)
	}
	cordoned, _ := trace(t, ctx, s, node.Name)
	if !cordoned.Spec.Unschedulable || cordoned.Labels[drain.ExcludeFromLBLabel] != "true" {
		t.Fatalf("after cordon: unschedulable %v, label %q", cordoned.Spec.Unschedulable, cordoned.Labels[drain.ExcludeFromLBLabel])
	}

	g, err := drain.Uncordon(ctx, s.client, node.Name, drain.Match{Kinds: []string{"state-change"}})
	if err != nil || !g.Back {
		t.Fatalf("Uncordon = %+v, %v; want the node back", g, err)
	}
	back, left := trace(t, ctx, s, node.Name)
	if back.Spec.Unschedulable {
		t.Error("node still unschedulable")
	}
	if got, ok := back.Labels[drain.ExcludeFromLBLabel]; !ok || got != "false" {
		t.Errorf("exclusion label = %q (present %v), want its previous value \"false\"", got, ok)
	}
	if len(left) > 0 {
		t.Errorf("Drainpipe left %v on the node", left)
	}

	before := s.writes.Load()
	again, err := drain.Uncordon(ctx, s.client, node.Name, drain.Match{})
	if err != nil || again.Back || s.writes.Load() != before {
		t.Errorf("second Uncordon = %+v, %v with %d writes; want nothing to give back and no write", again, err,
			s.writes.Load()-before)
	}
}

// A node an operator cordoned before Drainpipe stays cordoned when
// Drainpipe gives back what it added; an exclusion label it added is
// removed, not left "false".
func TestUncordonLeavesOperatorCordon(t *testing.T) {
	s, d := newScene(t, drain.DefaultConfig())
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	node := s.env.Node(ctx, fixture.NodeOptions{})
	s.env.Cordon(ctx, node.Name, true) // kubectl cordon, before the interruption
	if _, err := d.Run(ctx, drain.Request{Node: node.Name, Kind: "rebalance-recommendation", EventID: "ev-r"}); err != nil {
		t.Fatal(err)
	}
	g, err := drain.Uncordon(ctx, s.client, node.Name, drain.Match{Kinds: []string{"rebalance-recommendation"}, EventID: "ev-r"})
	if err != nil || !g.Back {
		t.Fatalf("Uncordon = %+v, %v; want Drainpipe's marks taken back", g, err)
	}
	back, left := trace(t, ctx, s, node.Name)
	if !back.Spec.Unschedulable {
		t.Error("the operator's cordon was undone")
	}
	if v, ok := back.Labels[drain.ExcludeFromLBLabel]; ok {
		t.Errorf("exclusion label left as %q, want it removed (absent before)", v)
	}
	if len(left) > 0 {
		t.Errorf("Drainpipe left %v on the node", left)
	}
}

// A node held for another kind or event, or being disrupted by Karpenter,
// is left as it is; its Karpenter taint is never touched.
func TestUncordonLeavesWhatIsNotItsToGive(t *testing.T) {
	s, d := newScene(t, drain.DefaultConfig())
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	nodes := s.env.Nodes(ctx, 2, fixture.NodeOptions{})
	karpenter := corev1.Taint{Key: drain.KarpenterDisruptedTaint, Effect: corev1.TaintEffectNoSchedule}
	for _, n := range nodes {
		if _, err := d.Run(ctx, drain.Request{Node: n.Name, Kind: "spot-interruption", EventID: "ev-s"}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		node  string
		match drain.Match
		want  string
	}{
		{nodes[0].Name, drain.Match{Kinds: []string{"scheduled-change"}}, "held for spot-interruption"},
		{nodes[0].Name, drain.Match{EventID: "ev-other"}, "held for event ev-s"},
	}
	for _, tt := range tests {
		g, err := drain.Uncordon(ctx, s.client, tt.node, tt.match)
		if err != nil || g.Back || !strings.Contains(g.Reason, tt.want) {
			t.Errorf("Uncordon(%+v) = %+v, %v; want left with a reason mentioning %q", tt.match, g, err, tt.want)
		}
	}
	n, _ := trace(t, ctx, s, nodes[1].Name)
	n.Spec.Taints = append(n.Spec.Taints, karpenter)
	if _, err := s.client.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	g, err := drain.Uncordon(ctx, s.client, nodes[1].Name, drain.Match{})
	if err != nil || g.Back || !strings.Contains(g.Reason, "Karpenter") {
		t.Errorf("Uncordon of a Karpenter-disrupted node = %+v, %v; want it left", g, err)
	}
	after, left := trace(t, ctx, s, nodes[1].Name)
	if !after.Spec.Unschedulable || len(left) == 0 {
		t.Errorf("Karpenter-disrupted node changed: unschedulable %v, Drainpipe marks %v", after.Spec.Unschedulable, left)
	}
}

// The out-of-service taint goes on once and comes off with the give-back;
// one an operator put is never removed.
func TestOutOfServiceTaint(t *testing.T) {
	s, d := newScene(t, drain.DefaultConfig())
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	operator := corev1.Taint{Key: drain.OutOfServiceTaintKey, Value: "nodeshutdown", Effect: corev1.TaintEffectNoExecute}
	nodes := []*corev1.Node{s.env.Node(ctx, fixture.NodeOptions{}), s.env.Node(ctx, fixture.NodeOptions{Taints: []corev1.Taint{operator}})}
	for _, n := range nodes {
		if _, err := d.Run(ctx, drain.Request{Node: n.Name, Kind: "state-change", EventID: "ev-stop"}); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	if wrote, err := drain.MarkOutOfService(ctx, s.client, nodes[0].Name, now); err != nil || !wrote {
		t.Fatalf("MarkOutOfService = %v, %v; want a write", wrote, err)
	}
	if wrote, err := drain.MarkOutOfService(ctx, s.client, nodes[0].Name, now); err != nil || wrote {
		t.Errorf("second MarkOutOfService = %v, %v; want no write", wrote, err)
	}
	if wrote, err := drain.MarkOutOfService(ctx, s.client, nodes[1].Name, now); err != nil || wrote {
		t.Errorf("MarkOutOfService on the operator's taint = %v, %v; want no write", wrote, err)
	}
	if m := drain.ReadMarks(nodes[0]); m.OutOfSvc {
		t.Error("stale node object reports the taint") // sanity: ReadMarks reads what it is given
	}
	for i, n := range nodes {
		if g, err := drain.Uncordon(ctx, s.client, n.Name, drain.Match{Kinds: []string{"state-change"}}); err != nil || !g.Back {
			t.Fatalf("Uncordon %d = %+v, %v", i, g, err)
		}
	}
	_, left := trace(t, ctx, s, nodes[0].Name)
	if len(left) > 0 {
		t.Errorf("Drainpipe left %v on node 0", left)
	}
	_, left = trace(t, ctx, s, nodes[1].Name)
	if len(left) != 1 || left[0] != "taint "+drain.OutOfServiceTaintKey {
		t.Errorf("node 1 marks after give-back %v, want only the operator's out-of-service taint", left)
	}
}

// A node left held for another kind (an instance terminating through its
// Auto Scaling hook, then stopped and started) still loses Drainpipe's
// out-of-service taint when its instance runs: the taint would evict
// everything from a live kubelet. The cordon stays.
func TestRunningClearsOutOfServiceOnly(t *testing.T) {
	s, d := newScene(t, drain.DefaultConfig())
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	node := s.env.Node(ctx, fixture.NodeOptions{})
	if _, err := d.Run(ctx, drain.Request{Node: node.Name, Kind: "asg-lifecycle", EventID: "ev-hook"}); err != nil {
		t.Fatal(err)
	}
	if _, err := drain.MarkOutOfService(ctx, s.client, node.Name, time.Now()); err != nil {
		t.Fatal(err)
	}
	g, err := drain.Uncordon(ctx, s.client, node.Name, drain.Match{Kinds: []string{"state-change"}, Running: true})
	if err != nil || g.Back || !strings.Contains(g.Reason, "out-of-service taint removed") {
		t.Fatalf("Uncordon = %+v, %v; want the node left held, its out-of-service taint removed", g, err)
	}
	after, left := trace(t, ctx, s, node.Name)
	if !after.Spec.Unschedulable || strings.Contains(strings.Join(left, ","), drain.OutOfServiceTaintKey) ||
		!strings.Contains(strings.Join(left, ","), "taint "+drain.TaintKey) {
		t.Errorf("after: unschedulable %v, Drainpipe marks %v; want cordoned and tainted, not out of service", after.Spec.Unschedulable, left)
	}
}

// UncordonRead gives back from the copy the caller read (the sweep's
// LIST); when the node changed since, its stale resourceVersion makes the
// patch conflict, and the give-back reads the node again and keeps the
// change.
func TestUncordonReadFromStaleCopy(t *testing.T) {
	s, d := newScene(t, drain.DefaultConfig())
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	node := s.env.Node(ctx, fixture.NodeOptions{})
	if _, err := d.Run(ctx, drain.Request{Node: node.Name, Kind: "state-change", EventID: "ev-stop"}); err != nil {
		t.Fatal(err)
	}
	stale, _ := trace(t, ctx, s, node.Name)
	patch := []byte(`{"metadata":{"labels":{"team":"storage"}}}`)
	if _, err := s.client.CoreV1().Nodes().Patch(ctx, node.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}

	g, err := drain.UncordonRead(ctx, s.client, stale, drain.Match{Kinds: []string{"state-change"}})
	if err != nil || !g.Back {
		t.Fatalf("UncordonRead = %+v, %v; want the node back", g, err)
	}
	back, left := trace(t, ctx, s, node.Name)
	if back.Spec.Unschedulable || len(left) > 0 || back.Labels[drain.LabelHeld] != "" {
		t.Errorf("after UncordonRead: unschedulable %v, Drainpipe left %v, held %q; want given back",
			back.Spec.Unschedulable, left, back.Labels[drain.LabelHeld])
	}
	if back.Labels["team"] != "storage" {
		t.Errorf("label team = %q: the change made after the read was lost", back.Labels["team"])
	}
}
