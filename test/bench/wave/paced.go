package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/kubewire"
	"github.com/drainpipe/drainpipe/test/fleet"
	"github.com/drainpipe/drainpipe/test/sandbox"
)

// budgetPollEvery is how often the paced reference lists the budgets:
// Drainpipe's role may list them, not watch them.
const budgetPollEvery = 500 * time.Millisecond

// drainPaced is the paced reference: the strongest strategy we know for a
// handler with Drainpipe's identity and permissions that knows the whole
// wave at once. As user drainpipe (its requests under
// deploy/flowcontrol.yaml's levels, not exempt) it cordons every target at
// once, then evicts at once every pod that heads no chain: pods no budget
// covers (freeWorkers at a time, as the floor's drain) and the pods of
// budgets whose pods in the wave fit their allowance. Only chain heads,
// the pods of budgets the wave's pods exceed, are paced, no faster in all
// than rate (the replacement rate measured before the wave: the control
// plane cannot replace evicted pods faster, and evictions beyond it only
// queue), Spot nodes' before hook nodes' and, within each, the deepest
// chain first (pacedRanks). Each budget's pods go one at a time in the
// same node order (bestPlan); a refusal waits for the budget's next
// change, seen by listing the budgets.
func drainPaced(ctx context.Context, c kubernetes.Interface, f *fleet.Fleet, rate float64) error {
	order := spotFirst(f.Targets())
	rank := map[string]int{}
	for i, n := range order {
		rank[n] = i
	}
	spot := map[string]bool{}
	for _, n := range f.Targets() {
		spot[n.Name] = n.Spot
	}
	var wg sync.WaitGroup
	patch := []byte(`{"spec":{"unschedulable":true}}`)
	for _, n := range order {
		wg.Go(func() {
			// A failure shows as a node never cordoned.
			_, _ = c.CoreV1().Nodes().Patch(ctx, n, types.MergePatchType, patch, metav1.PatchOptions{})
		})
	}
	wg.Wait()
	pods, pdbs, err := podsAndBudgets(ctx, c, f.Namespace)
	if err != nil {
		return err
	}
	free, queues := bestPlan(pods.Items, pdbs.Items, order)
	slices.SortStableFunc(free, func(a, b podRef) int { return rank[a.node] - rank[b.node] })
	allowance := map[string]int{}
	for _, b := range pdbs.Items {
		allowance[b.Name] = int(b.Status.ExpectedPods - b.Status.DesiredHealthy)
	}
	ranks := pacedRanks(queues, allowance, order, spot)
	w := pollBudgets(ctx, c, f.Namespace, pdbs.Items)
	p := newPacer(ctx, rate, max(1, int(rate/4)))
	turn := func(ref podRef) func() bool {
		r, paced := ranks[ref]
		if !paced {
			return nil // heads no chain: at once
		}
		return func() bool { return p.wait(ctx, r) == nil }
	}
	evictPlan(ctx, c, free, queues, w, turn)
	return nil
}

// pacedRanks ranks the chain heads, the pods of budgets whose pods in the
// wave exceed their allowance (the lowest rank goes first): Spot nodes'
// before the others', then the deepest chain (⌈pods/allowance⌉ cycles)
// first, then by the nodes' order. Pods of other budgets are not ranked:
// they go at once.
func pacedRanks(queues map[string][]podRef, allowance map[string]int, order []string, spot map[string]bool) map[podRef]int {
	n := len(order)
	node := map[string]int{}
	for i, name := range order {
		node[name] = i
	}
	depth := map[string]int{}
	deepest := 0
	for b, q := range queues {
		if a := allowance[b]; a >= 1 && len(q) > a {
			depth[b] = (len(q) - 1) / a
			deepest = max(deepest, depth[b])
		}
	}
	out := map[podRef]int{}
	for b, q := range queues {
		d, ok := depth[b]
		if !ok {
			continue
		}
		for _, ref := range q {
			class := 1
			if spot[ref.node] {
				class = 0
			}
			out[ref] = (class*(deepest+1)+deepest-d)*n + node[ref.node]
		}
	}
	return out
}

// spotFirst orders the targets' names: Spot nodes (a deadline) first,
// then the others, each in the fleet's order.
func spotFirst(targets []fleet.Node) []string {
	var spot, rest []string
	for _, n := range targets {
		if n.Spot {
			spot = append(spot, n.Name)
		} else {
			rest = append(rest, n.Name)
		}
	}
	return append(spot, rest...)
}

// pollBudgets is a budgetWatch fed by listing the budgets every
// budgetPollEvery: a budget whose status changed is signalled.
func pollBudgets(ctx context.Context, c kubernetes.Interface, ns string, initial []policyv1.PodDisruptionBudget) *budgetWatch {
	w := &budgetWatch{chs: map[string]chan struct{}{}}
	seen := map[string]string{}
	for _, b := range initial {
		seen[b.Name] = b.ResourceVersion
	}
	go func() {
		_ = wait.PollUntilContextCancel(ctx, budgetPollEvery, false, func(ctx context.Context) (bool, error) {
			l, err := c.PolicyV1().PodDisruptionBudgets(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, nil // the next poll tries again
			}
			for _, b := range l.Items {
				if seen[b.Name] != b.ResourceVersion {
					seen[b.Name] = b.ResourceVersion
					w.signal(b.Name)
				}
			}
			return false, nil
		})
	}()
	return w
}

// startStrategy starts the run of a peer that drains by itself, without
// a queue: limit as the exempt admin, paced as Drainpipe's user with
// Drainpipe's client settings, unthrottled on the client (its pace is its
// own).
func startStrategy(ctx context.Context, sb *sandbox.Sandbox, admin kubernetes.Interface, f *fleet.Fleet, peer string, rate float64) {
	if peer == "limit" {
		go limit(ctx, admin, f)
		return
	}
	rc := fleet.DrainpipeUser.Config(sb.RESTConfig())
	kubewire.Tune(rc, -1, 0)
	c, err := kubernetes.NewForConfig(rc)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-wave: the paced run's client:", err) // the run shows every node undrained
		return
	}
	go func() { _ = drainPaced(ctx, c, f, rate) }()
}

// podsOnTargets maps each pod on a target node, before the wave, to its
// node.
func podsOnTargets(ctx context.Context, c kubernetes.Interface, f *fleet.Fleet) (map[string]string, error) {
	targets := map[string]bool{}
	for _, n := range f.Targets() {
		targets[n.Name] = true
	}
	pods, err := c.CoreV1().Pods(f.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the fleet's pods: %w", err)
	}
	out := map[string]string{}
	for _, p := range pods.Items {
		if targets[p.Spec.NodeName] {
			out[p.Name] = p.Spec.NodeName
		}
	}
	return out, nil
}
