package main

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/test/fleet"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

const rateName = "floor-rate"

// measureRate measures, on the quiet control plane before the wave, how
// fast it turns evicted pods into Ready replacements: a Deployment of n
// pods kept off the target nodes has every pod deleted at once, and the
// rate is n over the time until n new pods are Ready. Each budget grant
// past a budget's first waits for one such replacement (the scheduler
// binds it, the node runs it, the disruption controller counts it), so no
// strategy gets them faster than this. The Deployment is removed before
// the wave.
func measureRate(ctx context.Context, c kubernetes.Interface, f *fleet.Fleet, n int) (float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	var targets []string
	for _, t := range f.Targets() {
		targets = append(targets, t.Name)
	}
	sel := labels.Set{"app": rateName}
	replicas, grace := int32(n), int64(0)
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: rateName}, Spec: appsv1.DeploymentSpec{
		Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: sel},
		Template: probeTemplate(sel, "10m", corev1.NodeSelectorOpNotIn, targets),
	}}
	deps := c.AppsV1().Deployments(f.Namespace)
	if _, err := deps.Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		return 0, fmt.Errorf("creating the rate probe: %w", err)
	}
	pods := c.CoreV1().Pods(f.Namespace)
	list := metav1.ListOptions{LabelSelector: sel.String()}
	old, err := readyPods(ctx, c, f.Namespace, list, nil, n)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	if err := pods.DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &grace}, list); err != nil {
		return 0, fmt.Errorf("deleting the rate probe's pods: %w", err)
	}
	if _, err := readyPods(ctx, c, f.Namespace, list, old, n); err != nil {
		return 0, err
	}
	elapsed := time.Since(start)
	if err := deps.Delete(ctx, rateName, metav1.DeleteOptions{}); err != nil {
		return 0, fmt.Errorf("removing the rate probe: %w", err)
	}
	if err := pods.DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &grace}, list); err != nil {
		return 0, fmt.Errorf("removing the rate probe's pods: %w", err)
	}
	return float64(n) / elapsed.Seconds(), nil
}

// readyPods polls (50 ms) until n Ready pods match list, none of them in
// old, and returns their UIDs.
func readyPods(ctx context.Context, c kubernetes.Interface, ns string, list metav1.ListOptions, old map[types.UID]bool, n int) (map[types.UID]bool, error) {
	var got map[types.UID]bool
	err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		l, err := c.CoreV1().Pods(ns).List(ctx, list)
		if err != nil {
			return false, err
		}
		got = map[types.UID]bool{}
		for i := range l.Items {
			p := &l.Items[i]
			if !old[p.UID] && p.DeletionTimestamp == nil && fixture.IsReady(p) {
				got[p.UID] = true
			}
		}
		return len(got) >= n, nil
	})
	if err != nil {
		return nil, fmt.Errorf("waiting for %d Ready pods of the rate probe: %w", n, err)
	}
	return got, nil
}
