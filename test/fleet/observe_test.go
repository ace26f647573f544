package fleet

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

func pod(name, node string, daemon bool) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}, Spec: corev1.PodSpec{NodeName: node}}
	if daemon {
		p.OwnerReferences = []metav1.OwnerReference{{Kind: "DaemonSet", Name: "node-agent", APIVersion: "apps/v1", UID: "u"}}
	}
	return p
}

// TestObserverCordonThenDrain checks the observer's rule: drained is the
// first moment a cordoned target has no evictable pod (DaemonSet and
// terminating pods do not count), never before its cordon; other nodes
// are ignored.
func TestObserverCordonThenDrain(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	node := func(name string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{fixture.PoolLabel: namespace}}}
	}
	c := fake.NewClientset(node("a"), node("b"),
		pod("a-app", "a", false), pod("a-long", "a", false), pod("a-agent", "a", true), pod("b-app", "b", false))
	f := &Fleet{Namespace: namespace, pool: namespace, Nodes: []Node{{Name: "a", Spot: true}, {Name: "b"}}}
	obs, err := f.Observe(ctx, c, c)
	if err != nil {
		t.Fatal(err)
	}
	defer obs.Stop()
	obs.Start()

	pods := c.CoreV1().Pods(namespace)
	if err := pods.Delete(ctx, "a-app", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	long, _ := pods.Get(ctx, "a-long", metav1.GetOptions{})
	now := metav1.Now()
	long.DeletionTimestamp = &now // terminating: no longer evictable
	if _, err := pods.Update(ctx, long, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	a, _ := c.CoreV1().Nodes().Get(ctx, "a", metav1.GetOptions{})
	a.Spec.Unschedulable = true
	if _, err := c.CoreV1().Nodes().Update(ctx, a, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := obs.WaitDrained(ctx); err != nil {
		t.Fatal(err)
	}
	times := obs.Times()
	if len(times) != 1 || times["a"].Cordoned == 0 || times["a"].Drained < times["a"].Cordoned {
		t.Errorf("times = %+v, want node a only, drained at or after its cordon", times)
	}
}

func TestPercentileCountsNeverAsInfinite(t *testing.T) {
	ds := []time.Duration{3 * time.Second, time.Second, 2 * time.Second, 0}
	if got := Percentile(ds, 50); got != 2*time.Second {
		t.Errorf("p50 = %v, want 2s", got)
	}
	if got := Percentile(ds, 99); got < time.Hour {
		t.Errorf("p99 = %v, want the never-seen value to dominate", got)
	}
}

func TestHookStateCountsOnceTwiceNever(t *testing.T) {
	s := awsfake.New()
	t.Cleanup(s.Close)
	hooks := []*awsfake.LifecycleAction{
		{ASG: "g", Hook: HookName, Token: "t1", InstanceID: "i-1"},
		{ASG: "g", Hook: HookName, Token: "t2", InstanceID: "i-2"},
	}
	for _, h := range hooks {
		s.AddLifecycleAction(*h)
	}
	f := &Fleet{Nodes: []Node{{Name: "a", Hook: hooks[0]}, {Name: "b", Hook: hooks[1]}, {Name: "c", Spot: true}}}
	if got := f.HookState(s); got != (Hooks{Open: 2}) {
		t.Errorf("before any completion: %+v", got)
	}
	_, err := autoscaling.NewFromConfig(s.Config()).CompleteLifecycleAction(t.Context(), &autoscaling.CompleteLifecycleActionInput{
		AutoScalingGroupName: aws.String("g"), LifecycleHookName: aws.String(HookName),
		LifecycleActionToken: aws.String("t1"), LifecycleActionResult: aws.String("CONTINUE"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.HookState(s); got != (Hooks{Completed: 1, Open: 1}) {
		t.Errorf("after one completion: %+v", got)
	}
}

func TestDeploymentsPlanPodsPerNode(t *testing.T) {
	f := &Fleet{Spec: Spec{Nodes: 7, PodsPerNode: 9}.withDefaults(), pool: namespace}
	total, budgets := 0, 0
	for _, w := range f.deployments() {
		total += int(*w.dep.Spec.Replicas)
		if w.pdb != nil {
			budgets++
		}
	}
	if total != 7*8 || budgets == 0 {
		t.Errorf("deployments hold %d pods with %d budgets, want %d pods and some budgets", total, budgets, 7*8)
	}
}
