package drain_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// When evictions wait for the cluster's pace, a pod whose budget lets its
// pods go one at a time goes first: its chain of replacement cycles is
// the drain's longest path. Here the pace lets one eviction through every
// ten seconds, and the first is the budget-chained db pod, though it is
// neither first nor last in the node's pod list.
func TestBudgetChainedPodsStartFirst(t *testing.T) {
	cfg := drain.DefaultConfig()
	cfg.Pace = drain.NewPace(1, 10) // 0.1 evictions a second, a burst of one
	s, d, ctx, n := deploymentsOnANode(t, cfg, map[string]int32{"api": 3, "db": 2, "web": 3})
	s.podsOn(t, ctx, n.Name, "app=api", 3)
	s.podsOn(t, ctx, n.Name, "app=web", 3)
	db := s.podsOn(t, ctx, n.Name, "app=db", 2)
	s.env.PDB(ctx, "db", map[string]string{"app": "db"}, fixture.MaxUnavailable(1))
	// A budget that lets all its pods go at once chains nothing.
	s.env.PDB(ctx, "api", map[string]string{"app": "api"}, fixture.MaxUnavailable(3))
	// The bucket's one token spent: every eviction of the Run waits its turn.
	done, err := cfg.Pace.Wait(ctx, drain.Place{Urgent: true, Depth: 1})
	if err != nil {
		t.Fatal(err)
	}
	done(nil)

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	s.events.onEvent(func(e drain.Event) {
		if e.Type == drain.EventEvicted {
			stop() // the first eviction is all this test looks at
		}
	})
	if _, err := d.Run(runCtx, drain.Request{Node: n.Name, Kind: "spot-interruption", Evict: true}); err != nil && runCtx.Err() == nil {
		t.Fatalf("Run: %v", err)
	}
	first := s.events.index(drain.EventEvicted, "")
	if first < 0 {
		t.Fatal("nothing was evicted")
	}
	got := s.events.events[first].Pod
	if want := s.key(db[0].Name[:strings.LastIndexByte(db[0].Name, '-')]); !strings.HasPrefix(got, want) {
		t.Errorf("the first eviction was %s, want a pod of the budget-chained db (%s-…)", got, want)
	}
}

// deploymentsOnANode is a scene with a node holding the Deployments of
// replicas by name, and the test's context.
func deploymentsOnANode(t *testing.T, cfg drain.Config, replicas map[string]int32) (*scene, *drain.Drainer, context.Context, *corev1.Node) {
	t.Helper()
	s, d := newScene(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	t.Cleanup(cancel)
	n := s.env.Node(ctx, fixture.NodeOptions{})
	for name, r := range replicas {
		s.env.Deployment(ctx, name, r, fixture.OnNode(n.Name))
	}
	return s, d, ctx, n
}
