package e2e

import (
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
)

// apiCounter stands between the function and the sandbox's API server and
// counts the function's requests by verb and resource (LIST nodes, PATCH
// nodes, ...), as an audit log would: cost measured, not counted from the
// code. It forwards with the sandbox's admin credentials.
type apiCounter struct {
	srv *httptest.Server

	mu     sync.Mutex
	counts map[string]int
}

// newAPICounter serves on 127.0.0.1 until the test ends.
func newAPICounter(t *testing.T, cfg *rest.Config) *apiCounter {
	t.Helper()
	target, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatalf("parsing the API server's URL: %v", err)
	}
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatalf("building the API server's transport: %v", err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = transport
	c := &apiCounter{counts: map[string]int{}}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.counts[requestKind(r)]++
		c.mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(c.srv.Close)
	return c
}

// requestKind names a request as the API server's metrics do: LIST for a
// GET of a collection, WATCH for a watch, else the method; then the
// resource (and subresource), object names and namespaces left out.
func requestKind(r *http.Request) string {
	path := strings.TrimPrefix(r.URL.Path, "/api/v1")
	if g := strings.SplitN(strings.TrimPrefix(path, "/apis/"), "/", 3); strings.HasPrefix(path, "/apis/") && len(g) == 3 {
		path = g[2] // /apis/GROUP/VERSION/...
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if len(parts) > 2 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	resource := parts[0]
	if len(parts) > 2 {
		resource += "/" + parts[2]
	}
	verb := r.Method
	switch {
	case r.URL.Query().Get("watch") == "true":
		verb = "WATCH"
	case r.Method == http.MethodGet && len(parts) == 1:
		verb = "LIST"
	}
	return verb + " " + resource
}

// kubeconfig writes a kubeconfig for the function that points at the counter.
func (c *apiCounter) kubeconfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "counted.kubeconfig")
	body := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: counted
  cluster: {server: %q}
users:
- name: counted
  user: {}
contexts:
- name: counted
  context: {cluster: counted, user: counted}
current-context: counted
`, c.srv.URL)
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// take returns the counts since the last take and starts again from zero.
func (c *apiCounter) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := maps.Clone(c.counts)
	clear(c.counts)
	return out
}
