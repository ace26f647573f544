package e2e

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"sync"
	"testing"
)

// completionProbe stands between the function and the Auto Scaling fake.
// When a CompleteLifecycleAction request arrives it takes a snapshot of the
// cluster (e.g. the pods still on the node) before passing the request on,
// so a test sees the cluster as it was when the hook was completed: an
// ordering check that needs no clock.
type completionProbe struct {
	srv *httptest.Server

	mu    sync.Mutex
	shots []snapshot
}

// snapshot is what the probe saw at one completion.
type snapshot struct {
	Pods []string
	Err  string // the snapshot's own failure, if any
}

// newCompletionProbe serves on 127.0.0.1 and forwards everything to target;
// it is closed when the test ends.
func newCompletionProbe(t *testing.T, target string, shoot func(ctx context.Context) ([]string, error)) *completionProbe {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatalf("parsing the fake's URL: %v", err)
	}
	p := &completionProbe{}
	proxy := httputil.NewSingleHostReverseProxy(u)
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if form, err := url.ParseQuery(string(body)); err == nil && form.Get("Action") == "CompleteLifecycleAction" {
			pods, err := shoot(r.Context())
			s := snapshot{Pods: pods}
			if err != nil {
				s.Err = err.Error()
			}
			p.mu.Lock()
			p.shots = append(p.shots, s)
			p.mu.Unlock()
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

// URL is the endpoint to give the function for Auto Scaling.
func (p *completionProbe) URL() string { return p.srv.URL }

// Snapshots returns one snapshot per completion request, in arrival order.
func (p *completionProbe) Snapshots() []snapshot {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.shots)
}
