package drain

import (
	"context"
	"log/slog"
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func budget(ns, name string, sel *metav1.LabelSelector, allowed, expected int32) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: sel},
		Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed, ExpectedPods: expected},
	}
}

// A budget chains its pods when it allows fewer disruptions than it
// expects pods; in policy/v1 an empty selector selects every pod of its
// namespace, and a budget never reaches into another namespace.
func TestChainedPods(t *testing.T) {
	app := func(v string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: map[string]string{"app": v}}
	}
	client := fake.NewClientset(
		budget("shop", "db", app("db"), 1, 20),
		budget("shop", "web", app("web"), 3, 3),
		budget("batch", "all", &metav1.LabelSelector{}, 0, 4),
	)
	d := New(client, DefaultConfig(), nil)
	budgets := d.chainingBudgets(context.Background(), slog.New(slog.DiscardHandler))
	for _, c := range []struct {
		ns, app string
		want    bool
	}{
		{"shop", "db", true},
		{"shop", "web", false},
		{"shop", "cache", false},
		{"other", "db", false},
		{"batch", "anything", true},
	} {
		if got := chained(budgets, c.ns, map[string]string{"app": c.app}); got != c.want {
			t.Errorf("%s/app=%s: chained %v, want %v", c.ns, c.app, got, c.want)
		}
	}
}
