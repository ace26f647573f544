package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/drainpipe/drainpipe/test/fleet"
)

// freeWorkers is how many evictions of pods no budget covers the bound
// keeps in flight.
const freeWorkers = 64

// podRef names one pod to evict.
type podRef struct{ ns, name, node string }

// bestPlan splits the interrupted nodes' evictable pods into those no
// budget covers (evicted all at once) and, per budget, the queue its pods
// are evicted in, one at a time: node by node in the nodes' order, so that
// every budget empties the same nodes first. A pod two budgets cover is
// refused by the API server whatever the strategy; it goes with the free
// ones, retried.
func bestPlan(pods []corev1.Pod, pdbs []policyv1.PodDisruptionBudget, order []string) (free []podRef, queues map[string][]podRef) {
	rank := map[string]int{}
	for i, n := range order {
		rank[n] = i
	}
	sels := make([]labels.Selector, len(pdbs))
	for i := range pdbs {
		s, err := metav1.LabelSelectorAsSelector(pdbs[i].Spec.Selector)
		if err != nil {
			s = labels.Nothing()
		}
		sels[i] = s
	}
	queues = map[string][]podRef{}
	for i := range pods {
		p := &pods[i]
		if _, ok := rank[p.Spec.NodeName]; !ok || !fleet.Evictable(p) { // DaemonSet pods are not
			continue
		}
		ref := podRef{ns: p.Namespace, name: p.Name, node: p.Spec.NodeName}
		var covering []string
		for j := range pdbs {
			if pdbs[j].Namespace == p.Namespace && sels[j].Matches(labels.Set(p.Labels)) {
				covering = append(covering, pdbs[j].Name)
			}
		}
		if len(covering) == 1 {
			queues[covering[0]] = append(queues[covering[0]], ref)
		} else {
			free = append(free, ref)
		}
	}
	for _, q := range queues {
		slices.SortStableFunc(q, func(a, b podRef) int { return rank[a.node] - rank[b.node] })
	}
	return free, queues
}

// drainBest is the bound run's drain: the best strategy that respects
// the budgets we know how to build, with what no handler has. It knows
// every budget and pod before it starts, acts as the exempt admin, and
// has no queue or lookup in its path. Pods no budget covers are evicted
// freeWorkers at a time: all at once, 2,660 exempt evictions at 500 nodes
// starved the API server (its own drain took 272 s, a neighbour's p99
// 210 s). A budget's pods are evicted one at a time: concurrent
// evictions under one budget conflict on its status, and the API server
// retries the losers after half a second each while they hold their
// seats. A refused eviction is retried as soon as the budget's status
// changes (a watch), never sooner, so the budgets see no flood.
func drainBest(ctx context.Context, c kubernetes.Interface, f *fleet.Fleet) error {
	pods, pdbs, err := podsAndBudgets(ctx, c, f.Namespace)
	if err != nil {
		return err
	}
	var order []string
	for _, n := range f.Targets() {
		order = append(order, n.Name)
	}
	free, queues := bestPlan(pods.Items, pdbs.Items, order)
	evictPlan(ctx, c, free, queues, newBudgetWatch(ctx, c, f.Namespace), nil)
	return nil
}

// podsAndBudgets lists the pods and budgets of ns, a drain's plan.
func podsAndBudgets(ctx context.Context, c kubernetes.Interface, ns string) (*corev1.PodList, *policyv1.PodDisruptionBudgetList, error) {
	pods, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("listing pods: %w", err)
	}
	pdbs, err := c.PolicyV1().PodDisruptionBudgets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("listing budgets: %w", err)
	}
	return pods, pdbs, nil
}

// evictPlan evicts a plan's pods: those no budget covers freeWorkers at
// a time, each budget's one at a time. turn, when set, gives each
// attempt's wait for its turn.
func evictPlan(ctx context.Context, c kubernetes.Interface, free []podRef, queues map[string][]podRef, w *budgetWatch, turn func(podRef) func() bool) {
	at := func(p podRef) func() bool {
		if turn == nil {
			return nil
		}
		return turn(p)
	}
	var wg sync.WaitGroup
	frees := make(chan podRef)
	for range min(freeWorkers, len(free)) {
		wg.Go(func() {
			for p := range frees {
				evictWhenAllowed(ctx, c, p, w.changed, "", at(p))
			}
		})
	}
	go func() {
		defer close(frees)
		for _, p := range free {
			frees <- p
		}
	}()
	for name, q := range queues {
		wg.Go(func() {
			for _, p := range q {
				evictWhenAllowed(ctx, c, p, w.changed, name, at(p))
			}
		})
	}
	wg.Wait()
}

// evictWhenAllowed evicts p until it is accepted or gone; a refusal waits
// for the next change of p's budget (at most a second, in case a change
// was missed). turn, when set, waits for each attempt's turn (false: give
// up).
func evictWhenAllowed(ctx context.Context, c kubernetes.Interface, p podRef, changed func(string) <-chan struct{}, budget string, turn func() bool) {
	ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: p.ns, Name: p.name}}
	for ctx.Err() == nil {
		next := changed(budget)
		if turn != nil && !turn() {
			return
		}
		err := c.CoreV1().Pods(p.ns).EvictV1(ctx, ev)
		if err == nil || apierrors.IsNotFound(err) {
			return
		}
		wait := time.Second
		if !apierrors.IsTooManyRequests(err) {
			wait = 50 * time.Millisecond // a conflict or a hiccup: ask again soon
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
		case <-next:
		case <-t.C:
		}
		t.Stop()
	}
}

// budgetWatch tells when each budget's status changes.
type budgetWatch struct {
	mu  sync.Mutex
	chs map[string]chan struct{}
}

func newBudgetWatch(ctx context.Context, c kubernetes.Interface, ns string) *budgetWatch {
	w := &budgetWatch{chs: map[string]chan struct{}{}}
	inf := informers.NewSharedInformerFactoryWithOptions(c, 0, informers.WithNamespace(ns)).Policy().V1().PodDisruptionBudgets().Informer()
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: func(_, obj any) {
		if b, ok := obj.(*policyv1.PodDisruptionBudget); ok {
			w.signal(b.Name)
		}
	}})
	go inf.Run(ctx.Done())
	cache.WaitForCacheSync(ctx.Done(), inf.HasSynced)
	return w
}

// changed is closed at the next change of budget ("": never).
func (w *budgetWatch) changed(budget string) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	ch, ok := w.chs[budget]
	if !ok {
		ch = make(chan struct{})
		w.chs[budget] = ch
	}
	return ch
}

func (w *budgetWatch) signal(budget string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if ch, ok := w.chs[budget]; ok {
		close(ch)
		delete(w.chs, budget)
	}
}
