package drain

import (
	"context"
	"log/slog"
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func budget(ns, name string, sel *metav1.LabelSelector, expected, desired int32) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: sel},
		Status:     policyv1.PodDisruptionBudgetStatus{ExpectedPods: expected, DesiredHealthy: desired, DisruptionsAllowed: expected - desired},
	}
}

// A budget's pods head a chain when the wave's pods under it (as far as
// the instance sees: every drain it runs at once) exceed what it lets go
// at once, and the deeper the chain, the sooner they go. A budget that
// merely allows fewer disruptions than it expects pods chains nothing
// while the wave's pods under it fit its allowance; in policy/v1 an empty
// selector selects every pod of its namespace, and a budget never reaches
// into another namespace.
func TestChainHeads(t *testing.T) {
	app := func(v string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: map[string]string{"app": v}}
	}
	client := fake.NewClientset(
		budget("shop", "db", app("db"), 20, 19),   // one at a time
		budget("shop", "api", app("api"), 20, 15), // maxUnavailable 25%: five at once
		budget("shop", "web", app("web"), 3, 0),   // all at once
		budget("batch", "all", &metav1.LabelSelector{}, 4, 2),
		budget("frozen", "none", &metav1.LabelSelector{}, 4, 4), // no eviction ever goes
	)
	d := New(client, DefaultConfig(), nil)
	budgets := d.budgetChains(context.Background(), slog.New(slog.DiscardHandler))
	of := func(ns, a string) *budgetChain { return chainOf(budgets, ns, map[string]string{"app": a}) }
	var wave waveChains
	// One drain of the instance: 3 db pods, 2 api, 3 web, 3 batch pods.
	first := wave.add(map[string]int{"shop/db": 3, "shop/api": 2, "shop/web": 3, "batch/all": 3})
	for _, c := range []struct {
		ns, app string
		want    int
	}{
		{"shop", "db", 2},
		{"shop", "api", 0},
		{"shop", "web", 0},
		{"shop", "cache", 0},
		{"other", "db", 0},
		{"batch", "anything", 1},
		{"frozen", "anything", 0},
	} {
		if got := wave.depth(of(c.ns, c.app)); got != c.want {
			t.Errorf("%s/app=%s: depth %d, want %d", c.ns, c.app, got, c.want)
		}
	}
	// A second drain of the same instance, 9 more api pods: 11 under a
	// budget that lets 5 go at once, two cycles past the first.
	second := wave.add(map[string]int{"shop/api": 9})
	if got := wave.depth(of("shop", "api")); got != 2 {
		t.Errorf("api with two drains' pods: depth %d, want 2", got)
	}
	second()
	first()
	if got := wave.depth(of("shop", "db")); got != 0 || len(wave.pods) != 0 {
		t.Errorf("after both drains: depth %d, %d budgets counted", got, len(wave.pods))
	}
}
