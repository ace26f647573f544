package main

import (
	"context"
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/test/fleet"
)

// clearTargets is the floor run's throughput part: once its cordons are
// in, it deletes every evictable pod of the interrupted nodes at once,
// budgets ignored, on an unthrottled admin client (APF's exempt level).
// No drain can empty the nodes sooner on this control plane: a drain sends
// the same deletions (as evictions, which also write the budgets), and the
// same replacements are made by the pods' controllers meanwhile. It is the
// floor's measure of what the control plane itself can do; the cycles'
// floor (drainCycles) adds what the budgets force on top.
func clearTargets(ctx context.Context, c kubernetes.Interface, f *fleet.Fleet) {
	var wg sync.WaitGroup
	for _, n := range f.Targets() {
		list, err := c.CoreV1().Pods(f.Namespace).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + n.Name})
		if err != nil {
			continue // the observer reports the node never drained
		}
		for _, p := range list.Items {
			if isDaemon(&p) {
				continue
			}
			wg.Go(func() {
				uid := p.UID
				_ = c.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{
					Preconditions: &metav1.Preconditions{UID: &uid}})
			})
		}
	}
	wg.Wait()
}

// rankMax combines two lower bounds of per-node drain times rank by rank
// (the q-th fastest node of each, zero: never): both bound the q-th
// fastest node of any run, so their larger one does.
func rankMax(a, b []time.Duration) []time.Duration {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.SortFunc(a, cmpNever)
	slices.SortFunc(b, cmpNever)
	out := make([]time.Duration, max(len(a), len(b)))
	for q := range out {
		if q >= len(a) || q >= len(b) || a[q] == 0 || b[q] == 0 {
			continue // never, on either bound
		}
		out[q] = max(a[q], b[q])
	}
	return out
}
