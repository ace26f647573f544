package sandbox_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/drainpipe/drainpipe/test/sandbox"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

func TestEKSNodeOnSandbox(t *testing.T) {
	sb := sandbox.ForTest(t)
	ctx := t.Context()
	env := fixture.New(t, sb.RESTConfig())
	node := env.Node(ctx, fixture.NodeOptions{
		Region: "eu-west-1", Zone: "eu-west-1b", InstanceType: "m6g.large", Arch: "arm64",
		NodeGroup: "ng-1", InstanceID: "i-0123456789abcdef0", IP: "10.0.1.23",
	})
	got := map[string]string{
		"name":       node.Name,
		"providerID": node.Spec.ProviderID,
		"pods":       node.Status.Allocatable.Pods().String(),
		"internalIP": node.Status.Addresses[0].Address,
	}
	for _, k := range []string{"kubernetes.io/hostname", "topology.kubernetes.io/region", "topology.kubernetes.io/zone",
		"node.kubernetes.io/instance-type", "eks.amazonaws.com/nodegroup", "kubernetes.io/os", "kubernetes.io/arch"} {
		got[k] = node.Labels[k]
	}
	want := map[string]string{
		"name":                             "ip-10-0-1-23.eu-west-1.compute.internal",
		"providerID":                       "aws:///eu-west-1b/i-0123456789abcdef0",
		"pods":                             "250",
		"internalIP":                       "10.0.1.23",
		"kubernetes.io/hostname":           "ip-10-0-1-23.eu-west-1.compute.internal",
		"topology.kubernetes.io/region":    "eu-west-1",
		"topology.kubernetes.io/zone":      "eu-west-1b",
		"node.kubernetes.io/instance-type": "m6g.large",
		"eks.amazonaws.com/nodegroup":      "ng-1",
		"kubernetes.io/os":                 "linux",
		"kubernetes.io/arch":               "arm64",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("node (-want +got):\n%s", diff)
	}
}

// TestPodKinds checks each kind of pod a drain meets is created as the
// API server and controllers would have it, and runs.
func TestPodKinds(t *testing.T) {
	sb := sandbox.ForTest(t)
	ctx := t.Context()
	env := fixture.New(t, sb.RESTConfig())
	node := env.Node(ctx, fixture.NodeOptions{})
	high := env.PriorityClass(ctx, "high", 1000)

	tests := []struct {
		name  string
		make  func() *corev1.Pod
		check func(*corev1.Pod) string
	}{
		{"bare", func() *corev1.Pod { return env.Pod(ctx, "bare") }, func(p *corev1.Pod) string {
			return cmp.Diff(0, len(p.OwnerReferences))
		}},
		{"mirror", func() *corev1.Pod { return env.MirrorPod(ctx, node, "static") }, func(p *corev1.Pod) string {
			_, mirror := p.Annotations[corev1.MirrorPodAnnotationKey]
			owner := metav1.GetControllerOf(p)
			return cmp.Diff([]any{true, "Node", node.Name}, []any{mirror, owner.Kind, owner.Name})
		}},
		{"emptyDir", func() *corev1.Pod { return env.Pod(ctx, "scratch", fixture.EmptyDir()) }, func(p *corev1.Pod) string {
			return cmp.Diff(true, p.Spec.Volumes[0].EmptyDir != nil)
		}},
		{"priority", func() *corev1.Pod { return env.Pod(ctx, "important", fixture.Priority(high.Name)) }, func(p *corev1.Pod) string {
			return cmp.Diff(int32(1000), *p.Spec.Priority)
		}},
		{"bound", func() *corev1.Pod { return env.Pod(ctx, "bound", fixture.BoundTo(node.Name)) }, func(p *corev1.Pod) string {
			return cmp.Diff(node.Name, p.Spec.NodeName)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.make()
			if !fixture.IsReady(p) || p.Status.Phase != corev1.PodRunning {
				t.Errorf("pod %s: phase %s, ready %t; want Running and Ready", p.Name, p.Status.Phase, fixture.IsReady(p))
			}
			if diff := tt.check(p); diff != "" {
				t.Errorf("pod %s (-want +got):\n%s", p.Name, diff)
			}
		})
	}
}

// TestTermination checks kwok ends pods as a kubelet would: at once with
// grace 0, at the end of a long grace period otherwise, and only once
// finalizers are gone.
func TestTermination(t *testing.T) {
	sb := sandbox.ForTest(t)
	ctx := t.Context()
	env := fixture.New(t, sb.RESTConfig())
	env.Node(ctx, fixture.NodeOptions{})
	pods := env.Client.CoreV1().Pods(env.Namespace)

	quick := env.Pod(ctx, "quick")
	brief := env.Pod(ctx, "brief", fixture.GracePeriod(1))
	slow := env.Pod(ctx, "slow", fixture.GracePeriod(3600))
	held := env.Pod(ctx, "held", fixture.Finalizers("drainpipe.test/hold"))
	for _, p := range []*corev1.Pod{quick, brief, slow, held} {
		if err := pods.Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatalf("deleting %s: %v", p.Name, err)
		}
	}
	env.WaitPodGone(ctx, quick)
	env.WaitPodGone(ctx, brief)
	for _, p := range []*corev1.Pod{slow, held} {
		got, err := pods.Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("getting %s after delete: %v", p.Name, err)
		}
		if got.DeletionTimestamp == nil {
			t.Errorf("pod %s: no deletionTimestamp, want Terminating", p.Name)
		}
	}
	env.RemoveFinalizers(ctx, held.Name)
	env.WaitPodGone(ctx, held)
}
