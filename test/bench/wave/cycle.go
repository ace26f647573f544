package main

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/test/fleet"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

const probeName = "floor-probe"

// measureCycle measures, on the quiet control plane before the wave, one
// replacement cycle: from an eviction a budget grants to the budget
// granting again, once the Deployment's replacement pod is scheduled,
// Ready and counted by the disruption controller. A probe Deployment of
// two pods behind a budget of one, kept off the target nodes, is evicted
// samples times; the fastest cycle is the floor's (no strategy's eviction
// frees a slot sooner).
func measureCycle(ctx context.Context, c kubernetes.Interface, f *fleet.Fleet, samples int) (time.Duration, error) {
	var spare []string
	for _, n := range f.Nodes {
		if !n.Spot && n.Hook == nil && len(spare) < 4 {
			spare = append(spare, n.Name)
		}
	}
	if len(spare) == 0 {
		return 0, fmt.Errorf("no node outside the wave for the cycle probe")
	}
	if err := createProbe(ctx, c, f.Namespace, spare); err != nil {
		return 0, err
	}
	best := time.Duration(0)
	for range samples {
		d, err := oneCycle(ctx, c, f.Namespace)
		if err != nil {
			return 0, err
		}
		if best == 0 || d < best {
			best = d
		}
	}
	return best, nil
}

func createProbe(ctx context.Context, c kubernetes.Interface, ns string, nodes []string) error {
	two, one := int32(2), intstr.FromInt32(1)
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": probeName}}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: probeName}, Spec: appsv1.DeploymentSpec{
		Replicas: &two, Selector: sel,
		Template: probeTemplate(sel.MatchLabels, "50m", corev1.NodeSelectorOpIn, nodes),
	}}
	if _, err := c.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating the cycle probe: %w", err)
	}
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: probeName},
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &one, Selector: sel}}
	if _, err := c.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating the cycle probe's budget: %w", err)
	}
	return nil
}

// oneCycle waits until the probe's budget grants a disruption, evicts one
// of its pods and times until the budget grants one again.
func oneCycle(ctx context.Context, c kubernetes.Interface, ns string) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := waitGrants(ctx, c, ns); err != nil {
		return 0, err
	}
	pods, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(labels.Set{"app": probeName}).String()})
	if err != nil {
		return 0, fmt.Errorf("listing the probe's pods: %w", err)
	}
	for _, p := range pods.Items {
		if !fixture.IsReady(&p) || p.DeletionTimestamp != nil {
			continue
		}
		start := time.Now()
		ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: p.Name}}
		if err := c.CoreV1().Pods(ns).EvictV1(ctx, ev); err != nil {
			return 0, fmt.Errorf("evicting probe pod %s: %w", p.Name, err)
		}
		if err := waitGrants(ctx, c, ns); err != nil {
			return 0, err
		}
		return time.Since(start), nil
	}
	return 0, fmt.Errorf("no Ready probe pod to evict")
}

// waitGrants polls (10 ms: the cycle is a few seconds, the control plane
// quiet) until the probe's budget allows a disruption.
func waitGrants(ctx context.Context, c kubernetes.Interface, ns string) error {
	err := wait.PollUntilContextCancel(ctx, 10*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		b, err := c.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, probeName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return b.Status.ObservedGeneration >= b.Generation && b.Status.DisruptionsAllowed > 0, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the probe's budget to grant a disruption: %w", err)
	}
	return nil
}

// budgetLoads reads, just before the wave, each budget of the fleet's
// namespace and its evictable pods on the target nodes.
func budgetLoads(ctx context.Context, c kubernetes.Interface, f *fleet.Fleet) ([]budgetLoad, error) {
	pdbs, err := c.PolicyV1().PodDisruptionBudgets(f.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing budgets: %w", err)
	}
	pods, err := c.CoreV1().Pods(f.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	target := map[string]bool{}
	for _, n := range f.Targets() {
		target[n.Name] = true
	}
	var out []budgetLoad
	for _, b := range pdbs.Items {
		sel, err := metav1.LabelSelectorAsSelector(b.Spec.Selector)
		if err != nil {
			return nil, fmt.Errorf("budget %s: %w", b.Name, err)
		}
		l := budgetLoad{Name: b.Name, Allowed: int(b.Status.ExpectedPods - b.Status.DesiredHealthy), OnNode: map[string]int{}}
		for i := range pods.Items {
			p := &pods.Items[i]
			if target[p.Spec.NodeName] && fleet.Evictable(p) && sel.Matches(labels.Set(p.Labels)) {
				l.OnNode[p.Spec.NodeName]++
			}
		}
		out = append(out, l)
	}
	return out, nil
}

// probeTemplate is a floor probe's pod: no grace (its cycles measure the
// control plane, not a shutdown), placed by op on nodes.
func probeTemplate(l map[string]string, cpu string, op corev1.NodeSelectorOperator, nodes []string) corev1.PodTemplateSpec {
	grace := int64(0)
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: l},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "app", Image: fixture.Image, Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}},
			TerminationGracePeriodSeconds: &grace,
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: op, Values: nodes}},
				}}},
			}},
		},
	}
}
