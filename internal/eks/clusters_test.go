package eks

import (
	"bytes"
	"encoding/pem"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/drainpipe/drainpipe/internal/awserr"
	"github.com/drainpipe/drainpipe/test/awsfake"
)

// apiServer is a stand-in Kubernetes API server over TLS that answers 401
// to the first `reject` requests and records what it was sent.
type apiServer struct {
	*httptest.Server
	mu       sync.Mutex
	reject   int
	onReject func()
	auth     []string
	bodies   []string
	agents   []string // User-Agent headers
	accepts  []string // Accept headers
	sent     []string // Content-Type headers
	conns    atomic.Int32
}

func newAPIServer(t *testing.T, reject int, onReject func()) *apiServer {
	a := &apiServer{reject: reject, onReject: onReject}
	a.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		a.mu.Lock()
		a.auth = append(a.auth, r.Header.Get("Authorization"))
		a.bodies = append(a.bodies, string(body))
		a.agents = append(a.agents, r.UserAgent())
		a.accepts = append(a.accepts, r.Header.Get("Accept"))
		a.sent = append(a.sent, r.Header.Get("Content-Type"))
		rejected := a.reject > 0
		a.reject--
		a.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if rejected {
			if a.onReject != nil {
				a.onReject()
			}
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`)
			return
		}
		if r.Method == http.MethodPost { // the body echoed, as it was sent
			w.Header().Set("Content-Type", r.Header.Get("Content-Type"))
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write(body)
			return
		}
		name := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
		_, _ = io.WriteString(w, `{"kind":"Node","apiVersion":"v1","metadata":{"name":"`+name+`"}}`)
	}))
	// As an API server does: HTTP/2, many requests on one connection.
	a.EnableHTTP2 = true
	a.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			a.conns.Add(1)
		}
	}
	a.StartTLS()
	t.Cleanup(a.Close)
	return a
}

func (a *apiServer) caPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: a.Certificate().Raw})
}

func (a *apiServer) seen() ([]string, []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.auth...), append([]string(nil), a.bodies...)
}

// contentTypes returns each request's Accept and Content-Type headers.
func (a *apiServer) contentTypes() (accepts, sent []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.accepts...), append([]string(nil), a.sent...)
}

func (a *apiServer) userAgents() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.agents...)
}

func newClusters(t *testing.T, clk *clock, overrides map[string]Endpoint) (*Clusters, *awsfake.Server) {
	fake := awsfake.New()
	t.Cleanup(fake.Close)
	return New(fake.Config(), Options{Now: clk.Now, Overrides: overrides}), fake
}

func TestClientDescribesOnceAndAuthenticates(t *testing.T) {
	clk := newClock()
	api := newAPIServer(t, 0, nil)
	c, fake := newClusters(t, clk, nil)
	fake.AddCluster(awsfake.Cluster{Name: "blue", Endpoint: api.URL, CAData: api.caPEM()})
	ctx := testCtx(t)

	for range 3 {
		k, err := c.Client(ctx, "blue")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := k.CoreV1().Nodes().Get(ctx, "ip-10-0-1-23.us-west-2.compute.internal", metav1.GetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(fake.CallsTo("DescribeCluster")); n != 1 {
		t.Errorf("DescribeCluster calls = %d, want 1 (cached)", n)
	}
	auth, _ := api.seen()
	if len(auth) != 3 {
		t.Fatalf("API requests = %d, want 3", len(auth))
	}
	want, err := c.signer.Token(ctx, "blue")
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range auth {
		if a != "Bearer "+want.Bearer() {
			t.Errorf("request %d Authorization is not the cluster's token", i)
		}
	}
}

func TestClientResignsOnceOn401(t *testing.T) {
	tests := []struct {
		name     string
		reject   int
		post     bool
		wantReqs int
		wantErr  bool
	}{
		{name: "get retried with a new token", reject: 1, wantReqs: 2},
		{name: "post body replayed", reject: 1, post: true, wantReqs: 2},
		{name: "persistent 401 retried only once", reject: 5, wantReqs: 2, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newClock()
			// A second passes per refusal: the token is far from its
			// refresh age, so only the 401 can make the Signer re-sign.
			api := newAPIServer(t, tt.reject, func() { clk.Advance(time.Second) })
			c, fake := newClusters(t, clk, map[string]Endpoint{"blue": {URL: api.URL, CAData: api.caPEM()}})
			ctx := testCtx(t)
			k, err := c.Client(ctx, "blue")
			if err != nil {
				t.Fatal(err)
			}

			if tt.post {
				ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "default"}}
				err = k.PolicyV1().Evictions("default").Evict(ctx, ev)
			} else {
				_, err = k.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
			}

			if (err != nil) != tt.wantErr {
				t.Fatalf("request error = %v, wantErr %v", err, tt.wantErr)
			}
			if tt.wantErr && !apierrors.IsUnauthorized(err) {
				t.Errorf("error = %v, want Unauthorized", err)
			}
			auth, bodies := api.seen()
			if len(auth) != tt.wantReqs {
				t.Fatalf("API requests = %d, want %d", len(auth), tt.wantReqs)
			}
			if auth[0] == auth[1] {
				t.Error("the retry carried the refused token")
			}
			if tt.post && (bodies[1] == "" || bodies[0] != bodies[1]) {
				t.Errorf("retried body = %q, want the original %q", bodies[1], bodies[0])
			}
			if n := len(fake.Calls()); n != 0 {
				t.Errorf("AWS calls = %d, want none with an endpoint override", n)
			}
		})
	}
}

func TestClientErrors(t *testing.T) {
	tests := []struct {
		name      string
		fault     awsfake.Fault
		times     int
		noCluster bool
		wantClass error
		wantCalls int
	}{
		{name: "access denied", fault: awsfake.AccessDenied, times: 1, wantClass: awserr.ErrAccessDenied, wantCalls: 1},
		{name: "cluster not found", noCluster: true, wantClass: awserr.ErrNotFound, wantCalls: 1},
		{name: "throttled then served", fault: awsfake.Throttle, times: 2, wantCalls: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := newAPIServer(t, 0, nil)
			c, fake := newClusters(t, newClock(), nil)
			if !tt.noCluster {
				fake.AddCluster(awsfake.Cluster{Name: "blue", Endpoint: api.URL, CAData: api.caPEM()})
			}
			if tt.fault != 0 {
				fake.Inject("DescribeCluster", tt.fault, tt.times)
			}
			_, err := c.Client(testCtx(t), "blue")
			if tt.wantClass == nil && err != nil {
				t.Fatalf("Client() error = %v", err)
			}
			if got := awserr.Class(err); got != tt.wantClass {
				t.Errorf("Client() error = %v, class %v; want %v", err, got, tt.wantClass)
			}
			if n := len(fake.CallsTo("DescribeCluster")); n != tt.wantCalls {
				t.Errorf("DescribeCluster calls = %d, want %d", n, tt.wantCalls)
			}
		})
	}
}

func TestClientRetriesFailedBuild(t *testing.T) {
	api := newAPIServer(t, 0, nil)
	c, fake := newClusters(t, newClock(), nil)
	fake.AddCluster(awsfake.Cluster{Name: "blue", Endpoint: api.URL, CAData: api.caPEM()})
	fake.Inject("DescribeCluster", awsfake.AccessDenied, 1)
	ctx := testCtx(t)
	if _, err := c.Client(ctx, "blue"); !errors.Is(err, awserr.ErrAccessDenied) {
		t.Fatalf("first Client() = %v, want access denied", err)
	}
	if _, err := c.Client(ctx, "blue"); err != nil {
		t.Fatalf("second Client() = %v, want the failure not cached", err)
	}
}

func TestOverrideWithoutCATakesDescribedCA(t *testing.T) {
	api := newAPIServer(t, 0, nil)
	// The override reaches the same server under another name: only the
	// CA may come from DescribeCluster.
	proxyURL := strings.Replace(api.URL, "127.0.0.1", "localhost", 1)
	c, fake := newClusters(t, newClock(), map[string]Endpoint{"blue": {URL: proxyURL}})
	fake.AddCluster(awsfake.Cluster{Name: "blue", Endpoint: "https://unreachable.invalid", CAData: api.caPEM()})
	ctx := testCtx(t)
	k, err := c.Client(ctx, "blue")
	if err != nil {
		t.Fatal(err)
	}
	// Counted before the request: its failure describes the cluster
	// once more (TestUnchangedClusterKeepsItsClient).
	if n := len(fake.CallsTo("DescribeCluster")); n != 1 {
		t.Errorf("DescribeCluster calls = %d, want 1 for the CA", n)
	}
	_, err = k.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	// httptest's certificate names 127.0.0.1 and example.com, not
	// localhost: a TLS name error proves the described CA was trusted
	// (an unknown CA fails earlier, with "unknown authority").
	if err == nil || strings.Contains(err.Error(), "unknown authority") {
		t.Fatalf("request error = %v, want a host name mismatch under the described CA", err)
	}
}

func TestValidURL(t *testing.T) {
	tests := []struct {
		url     string
		wantErr bool
	}{
		{"https://ABCD.gr7.us-west-2.eks.amazonaws.com", false},
		{"http://127.0.0.1:6443", false},
		{"http://localhost:8001", false},
		{"http://10.0.0.1:6443", true},
		{"ftp://example", true},
		{"https://", true},
		{"::not a url", true},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			if err := CheckEndpoint(tt.url); (err != nil) != tt.wantErr {
				t.Errorf("CheckEndpoint() error = %v, wantErr %v", err, tt.wantErr)
			}
		})
	}
}

func TestBadOverrideRejectedWithoutCalls(t *testing.T) {
	c, fake := newClusters(t, newClock(), map[string]Endpoint{"blue": {URL: "http://10.0.0.1:6443"}})
	if _, err := c.Client(testCtx(t), "blue"); err == nil {
		t.Error("Client() error = nil, want the override refused")
	}
	if n := len(fake.Calls()); n != 0 {
		t.Errorf("AWS calls = %d, want 0", n)
	}
}

func TestTransportErrorsDoNotLeakToken(t *testing.T) {
	clk := newClock()
	api := newAPIServer(t, 5, nil)
	c, _ := newClusters(t, clk, map[string]Endpoint{"blue": {URL: api.URL, CAData: api.caPEM()}})
	ctx := testCtx(t)
	k, err := c.Client(ctx, "blue")
	if err != nil {
		t.Fatal(err)
	}
	_, err = k.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Error("getting node", "err", err)
	if strings.Contains(logged.String(), "k8s-aws-v1.") {
		t.Errorf("log contains the token: %s", logged.String())
	}
}
