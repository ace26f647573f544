package drain

import (
	"context"
	"log/slog"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// budgetChain is a disruption budget as the order of a wave sees it:
// which pods it selects and how many of them it lets go at once. Pods
// beyond that allowance leave one replacement cycle after another, the
// longest paths of a wave, so the pods of the budgets that must cycle
// most start first, as the longest jobs do in a schedule.
type budgetChain struct {
	key string // namespace/name
	ns  string
	sel labels.Selector
	// allowance: the disruptions it allows with every pod healthy
	// (expected pods less desired healthy).
	allowance int
}

// budgetChains lists the cluster's budgets that let pods go (an allowance
// of at least one: under any other no eviction goes and no order helps).
// It reads the API server's cache (resourceVersion 0): the order is a
// hint, and a budget a few seconds stale orders no worse than none. On
// error it logs and returns none: the drain goes on unordered.
func (d *Drainer) budgetChains(ctx context.Context, log *slog.Logger) []budgetChain {
	list, err := d.client.PolicyV1().PodDisruptionBudgets(metav1.NamespaceAll).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		log.Warn("cannot list disruption budgets: pods are evicted in no budget's order", slog.String("error", err.Error()))
		return nil
	}
	var out []budgetChain
	for i := range list.Items {
		b := &list.Items[i]
		allowance := int(b.Status.ExpectedPods - b.Status.DesiredHealthy)
		if allowance < 1 {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(b.Spec.Selector)
		if err != nil {
			continue // the Eviction API cannot apply it either
		}
		out = append(out, budgetChain{key: podKey(b.Namespace, b.Name), ns: b.Namespace, sel: sel, allowance: allowance})
	}
	return out
}

// chainOf returns the budget that selects a pod of namespace ns with
// labels lbls, nil for none (when several do, the Eviction API refuses the
// pod, and the first is as good as any).
func chainOf(budgets []budgetChain, ns string, lbls map[string]string) *budgetChain {
	for i := range budgets {
		if b := &budgets[i]; b.ns == ns && b.sel.Matches(labels.Set(lbls)) {
			return b
		}
	}
	return nil
}

// chainDepth is how many replacement cycles past the first a budget of
// allowance goes through to let pods of its pods go: 0 while they all go
// at once.
func chainDepth(pods, allowance int) int {
	if allowance < 1 {
		return 0
	}
	return max(pods-1, 0) / allowance
}

// waveChains counts, per budget, the pods on the nodes an instance drains
// at once: the wave's pods under each budget as far as the instance sees
// them without reading more. It is safe for concurrent use.
type waveChains struct {
	mu   sync.Mutex
	pods map[string]int
}

// add counts pods (per budget key) until the returned function is called.
func (w *waveChains) add(pods map[string]int) (remove func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pods == nil {
		w.pods = map[string]int{}
	}
	for k, n := range pods {
		w.pods[k] += n
	}
	return func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		for k, n := range pods {
			if w.pods[k] -= n; w.pods[k] <= 0 {
				delete(w.pods, k)
			}
		}
	}
}

// depth is the chain depth of b's pods in the wave, 0 for none.
func (w *waveChains) depth(b *budgetChain) int {
	if b == nil {
		return 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return chainDepth(w.pods[b.key], b.allowance)
}
