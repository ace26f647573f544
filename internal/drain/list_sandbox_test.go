package drain_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// A drain's first list of the node's pods is served from the API
// server's watch cache as it stands (resourceVersion 0): a consistent
// list first waits for the cache to catch up with etcd, and under a
// 500-node wave's load such lists ran into the API server's own timeout
// and cost their records a delivery. The watch that follows starts at
// the list's resourceVersion, so a pod the cached list missed still
// comes: the drain ends with the node empty.
func TestDrainListsPodsFromTheCache(t *testing.T) {
	s, d := newScene(t, drain.DefaultConfig())
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	n := s.env.Nodes(ctx, 1, fixture.NodeOptions{})[0]
	p := s.env.Pod(ctx, "app", fixture.BoundTo(n.Name))
	var mu sync.Mutex
	var lists []string // the resourceVersion of each pod list
	via := func(r *http.Request, rt http.RoundTripper) (*http.Response, error) {
		q := r.URL.Query()
		if r.Method == http.MethodGet && r.URL.Path == "/api/v1/pods" && q.Get("watch") != "true" {
			mu.Lock()
			lists = append(lists, q.Get("resourceVersion"))
			mu.Unlock()
		}
		return rt.RoundTrip(r)
	}
	s.via.Store(&via)

	rep, err := d.Run(ctx, drain.Request{Node: n.Name, Kind: "spot-interruption", Evict: true})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lists) == 0 || lists[0] != "0" {
		t.Errorf("pod lists at resourceVersion %q, want the first at \"0\"", lists)
	}
	if !rep.Done || len(rep.Evicted) != 1 || rep.Evicted[0] != s.key(p.Name) {
		t.Errorf("report %+v, want %s evicted and the drain done", rep, p.Name)
	}
}
