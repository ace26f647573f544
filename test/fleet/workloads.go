package fleet

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

type workload struct {
	dep *appsv1.Deployment
	pdb *policyv1.PodDisruptionBudget
}

// deployments plans the Deployments: PodsPerNode-1 pods a node in all.
func (f *Fleet) deployments() []workload {
	total := f.Spec.Nodes * (f.Spec.PodsPerNode - 1)
	var out []workload
	for i := 0; total > 0; i++ {
		n := int32(min(total, f.Spec.Replicas))
		total -= int(n)
		name := fmt.Sprintf("app-%03d", i)
		var grace int64
		if i%5 == 4 {
			grace = int64(f.Spec.LongGrace / time.Second)
		}
		w := workload{dep: &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: appsv1.DeploymentSpec{
				Replicas: &n,
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
				Template: f.template(name, grace, false),
			},
		}}
		var b policyv1.PodDisruptionBudgetSpec
		switch {
		case int(n) < f.Spec.Replicas:
			// A short remainder gets no budget: 80% of a few pods
			// rounds up to all of them, a budget that never allows a
			// disruption (a fault of its own, not this fleet's).
		case i%3 == 0:
			v := intstr.FromString("25%")
			b.MaxUnavailable = &v
		case i%3 == 1:
			v := intstr.FromString("80%")
			b.MinAvailable = &v
		}
		if b.MaxUnavailable != nil || b.MinAvailable != nil {
			b.Selector = w.dep.Spec.Selector
			w.pdb = &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: b}
		}
		out = append(out, w)
	}
	return out
}

// template is a pod of the fleet: confined to its nodes, with a CPU
// request so the scheduler spreads pods evenly.
func (f *Fleet) template(name string, grace int64, agent bool) corev1.PodTemplateSpec {
	no := false
	p := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "app", Image: fixture.Image,
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m")}},
			}},
			TerminationGracePeriodSeconds: &grace,
			NodeSelector:                  map[string]string{fixture.PoolLabel: f.pool},
			AutomountServiceAccountToken:  &no,
			EnableServiceLinks:            &no,
		},
	}
	if agent { // node agents tolerate every taint
		p.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
	}
	return p
}

// createBlockers gives each blocked node one pod behind a budget allowing
// no disruption (maxUnavailable 0): no eviction of it ever succeeds.
func (f *Fleet) createBlockers(ctx context.Context, c kubernetes.Interface) error {
	for _, n := range f.Nodes {
		if !n.Blocked {
			continue
		}
		name, one, zero := "blocker-"+n.InstanceID, int32(1), intstr.FromInt32(0)
		tpl := f.template(name, 0, false)
		tpl.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": n.Name}
		dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: appsv1.DeploymentSpec{
			Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}, Template: tpl}}
		if _, err := c.AppsV1().Deployments(namespace).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating deployment %s: %w", name, err)
		}
		pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: &zero, Selector: dep.Spec.Selector}}
		if _, err := c.PolicyV1().PodDisruptionBudgets(namespace).Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating budget %s: %w", name, err)
		}
	}
	return nil
}

func waitNodesReady(ctx context.Context, c kubernetes.Interface, pool string, n int) error {
	ready := 0
	err := wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		list, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: fixture.PoolLabel + "=" + pool})
		if err != nil {
			return false, err
		}
		ready = 0
		for _, node := range list.Items {
			for _, cond := range node.Status.Conditions {
				if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
					ready++
				}
			}
		}
		return ready == n, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %d nodes to be Ready (%d are): %w", n, ready, err)
	}
	return nil
}

// waitWorkloads waits for Nodes×PodsPerNode Ready pods (and the blockers)
// and for every budget's status.
func (f *Fleet) waitWorkloads(ctx context.Context, c kubernetes.Interface) error {
	want := f.Spec.Nodes * f.Spec.PodsPerNode
	for _, n := range f.Nodes {
		if n.Blocked {
			want++
		}
	}
	ready := 0
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		pods, err := c.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return false, err
		}
		ready = 0
		for i := range pods.Items {
			if fixture.IsReady(&pods.Items[i]) {
				ready++
			}
		}
		if ready < want {
			return false, nil
		}
		pdbs, err := c.PolicyV1().PodDisruptionBudgets(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, p := range pdbs.Items {
			if p.Status.ObservedGeneration < p.Generation || p.Status.ExpectedPods == 0 {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %d Ready pods (%d are) and budget statuses: %w", want, ready, err)
	}
	return nil
}
