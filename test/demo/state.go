package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// printState prints each node's schedulability and taints, and the pods
// on it with their state.
func printState(ctx context.Context, w io.Writer, sc *scene, n names) error {
	pods, err := sc.env.Client.CoreV1().Pods(sc.env.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing pods: %w", err)
	}
	byNode := map[string][]string{}
	for i := range pods.Items {
		p := &pods.Items[i]
		byNode[p.Spec.NodeName] = append(byNode[p.Spec.NodeName], fmt.Sprintf("%s (%s)", p.Name, podState(p)))
	}
	for _, node := range sc.nodes {
		cur, err := sc.env.Client.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("getting node %s: %w", node.Name, err)
		}
		sched := "schedulable"
		if cur.Spec.Unschedulable {
			sched = "UNSCHEDULABLE"
		}
		taints := []string{}
		for _, t := range cur.Spec.Taints {
			taints = append(taints, fmt.Sprintf("%s=%s:%s", t.Key, t.Value, t.Effect))
		}
		if len(taints) == 0 {
			taints = append(taints, "none")
		}
		fmt.Fprintf(w, "\n  %s  %s  %s\n    taints: %s\n", n.node(node.Name), node.Name, sched, strings.Join(taints, ", "))
		list := byNode[node.Name]
		slices.Sort(list)
		for _, p := range list {
			fmt.Fprintf(w, "    pod %s\n", p)
		}
	}
	if pending := byNode[""]; len(pending) > 0 {
		slices.Sort(pending)
		fmt.Fprintf(w, "\n  not scheduled\n")
		for _, p := range pending {
			fmt.Fprintf(w, "    pod %s\n", p)
		}
	}
	return nil
}

func podState(p *corev1.Pod) string {
	switch {
	case p.DeletionTimestamp != nil:
		return "Terminating"
	case fixture.IsReady(p):
		return "Ready"
	default:
		return string(p.Status.Phase)
	}
}
