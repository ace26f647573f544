package drain_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// Pods a budget refuses wait for it without taking the turns of the pods
// that can go now: here six pods whose budget allows no disruption retry
// as fast as their backoff lets them, under a pace of four evictions a
// second, and the node's four free pods are all evicted all the same.
// (Retrying at the front of the queue, the refused pods took every token.)
func TestRefusedPodsDoNotStarveFreePods(t *testing.T) {
	cfg := drain.DefaultConfig()
	cfg.Pace = drain.NewPace(4, 1)
	cfg.BackoffInitial, cfg.BackoffMax = time.Millisecond, 10*time.Millisecond
	s, d, ctx, n := deploymentsOnANode(t, cfg, map[string]int32{"db": 6, "web": 4})
	s.podsOn(t, ctx, n.Name, "app=db", 6)
	s.podsOn(t, ctx, n.Name, "app=web", 4)
	s.env.PDB(ctx, "db", map[string]string{"app": "db"}, fixture.MaxUnavailable(0))

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var mu sync.Mutex
	web := map[string]bool{}
	s.events.onEvent(func(e drain.Event) {
		if e.Type != drain.EventEvicted || !strings.HasPrefix(e.Pod, s.key("web-")) {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if web[e.Pod] = true; len(web) == 4 {
			stop() // every free pod went: all this test looks at
		}
	})
	// A deadline far ahead: the drain races one, and no other drain's
	// deadline holds it back.
	req := drain.Request{Node: n.Name, Kind: "spot-interruption", Evict: true, Deadline: time.Now().Add(10 * time.Minute)}
	if _, err := d.Run(runCtx, req); err != nil && runCtx.Err() == nil {
		t.Fatalf("Run: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(web) != 4 {
		t.Errorf("%d of the 4 free pods evicted before the test's time ran out: the refused pods took their turns", len(web))
	}
}
