package drain

import (
	"context"
	"log/slog"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// chainingBudget is a disruption budget that cannot let all its pods go
// at once: their evictions chain, each waiting for a replacement to be
// ready before the budget grants the next. Such pods start first, so the
// longest chains of a wave are not the last to begin.
type chainingBudget struct {
	ns  string
	sel labels.Selector
}

// chainingBudgets lists the cluster's budgets that chain their pods'
// evictions (fewer disruptions allowed than pods expected). It reads the
// API server's cache (resourceVersion 0): the order is a hint, and a
// budget a few seconds stale orders no worse than none. On error it logs
// and returns none: the drain goes on unordered.
func (d *Drainer) chainingBudgets(ctx context.Context, log *slog.Logger) []chainingBudget {
	list, err := d.client.PolicyV1().PodDisruptionBudgets(metav1.NamespaceAll).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		log.Warn("cannot list disruption budgets: pods are evicted in no budget's order", slog.String("error", err.Error()))
		return nil
	}
	var out []chainingBudget
	for i := range list.Items {
		b := &list.Items[i]
		if b.Status.DisruptionsAllowed >= b.Status.ExpectedPods {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(b.Spec.Selector)
		if err != nil {
			continue // the Eviction API cannot apply it either
		}
		out = append(out, chainingBudget{ns: b.Namespace, sel: sel})
	}
	return out
}

// chained reports whether a chaining budget selects a pod of namespace ns
// with labels lbls.
func chained(budgets []chainingBudget, ns string, lbls map[string]string) bool {
	for _, b := range budgets {
		if b.ns == ns && b.sel.Matches(labels.Set(lbls)) {
			return true
		}
	}
	return false
}
