package fleet_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/test/fleet"
	"github.com/drainpipe/drainpipe/test/sandbox"
)

// TestEndpointProxyClose: the proxy passes TLS through (the client
// trusts the server's own certificate), and Close refuses new
// connections and cuts open ones, as a deleted cluster's endpoint does.
func TestEndpointProxyClose(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	p, err := fleet.StartEndpointProxy(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	hc := srv.Client()
	resp, err := hc.Get(p.URL())
	if err != nil {
		t.Fatalf("through the proxy: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "ok" || p.Accepted() != 1 {
		t.Fatalf("through the proxy: body %q, %d connections accepted; want ok, 1", body, p.Accepted())
	}
	open, err := net.Dial("tcp", strings.TrimPrefix(p.URL(), "https://"))
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()

	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	// The open connection is cut: a read ends at once (the deadline only
	// bounds a failure of the test).
	_ = open.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := open.Read(make([]byte, 1)); err == nil || errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
		t.Errorf("read on a connection open at Close = %v, want it cut", err)
	}
	if _, err := hc.Get(p.URL()); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("request after Close: %v, want connection refused", err)
	}
	if _, err := fleet.StartEndpointProxy("https://example.com:443"); err == nil {
		t.Error("a proxy to a non-loopback endpoint started")
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// TestWaveEndpointChanges is fault 10, the cluster recreated under the
// same name while a container is warm: the bootstrap runs in EKS mode
// (DescribeCluster, tokens checked by aws-iam-authenticator) and first
// reaches the cluster through an EndpointProxy, the old incarnation.
// Once the first part of the wave is done, the proxy closes (its port
// refuses connections, open ones are cut) and DescribeCluster answers the
// API server's own address. The rest of the wave must be handled by the
// same warm environment: its client's watchdog drops the cached endpoint
// after eks.FailureLimit connection failures and describes the cluster
// again; the retried messages come back and finish. Invariants only.
func TestWaveEndpointChanges(t *testing.T) {
	ctx, root, bootstrap := startWave(t, 4*time.Minute)
	sb := sandbox.StartForTest(t, sandbox.Options{EKSAuth: &sandbox.EKSAuth{Cluster: fleet.DefaultCluster}})
	cluster, ok := sb.EKS()
	if !ok {
		t.Fatal("the sandbox runs without EKS authentication")
	}
	r := newRig(ctx, t, root, bootstrap, sb, fleet.Spec{Nodes: 8, PodsPerNode: 4, SpotShare: 0.375, HookShare: 0.6, Replicas: 6, Seed: 10})
	proxy, err := fleet.StartEndpointProxy(cluster.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })
	old := cluster
	old.Endpoint = proxy.URL()
	// One environment, kept warm; retried messages come back after a
	// second instead of the queue's visibility timeout.
	dp := r.deploy(t, fleet.Function{Cluster: cluster.Name, EKS: &old, MaxConcurrency: 1, Timeout: time.Minute,
		Env: []string{"DRAINPIPE_RETRY_DELAY=1s"}})

	first, rest := halves(r.fleet.Targets())
	r.obs.Start()
	sent, err := fleet.EnqueueNodes(r.fake, dp.Queue, first)
	if err != nil {
		t.Fatal(err)
	}
	r.settle(ctx, t, dp, first...)
	described := len(r.fake.CallsTo("DescribeCluster"))
	if described == 0 || proxy.Accepted() == 0 {
		t.Fatalf("before the swap: %d DescribeCluster calls, %d connections through the old endpoint; want both > 0",
			described, proxy.Accepted())
	}

	swap := time.Now()
	if err := proxy.Close(); err != nil {
		t.Fatal(err)
	}
	fleet.RegisterEKS(r.fake, cluster) // recreated: same name, new endpoint
	n, err := fleet.EnqueueNodes(r.fake, dp.Queue, rest)
	if err != nil {
		t.Fatal(err)
	}
	r.settle(ctx, t, dp)
	r.checkWave(t, dp, sent+n)

	if again := len(r.fake.CallsTo("DescribeCluster")) - described; again == 0 {
		t.Errorf("DescribeCluster was not called after the endpoint changed")
	}
	invs, before := dp.Mapping.Invocations(), map[int]bool{}
	for _, inv := range invs {
		if inv.Start.Before(swap) {
			before[inv.Env] = true
		}
	}
	var warmAfter, coldAfter int
	for _, inv := range invs {
		switch {
		case inv.Start.Before(swap):
		case inv.Cold:
			coldAfter++
		case before[inv.Env]:
			warmAfter++
		}
	}
	// With one environment and no cold start after the swap, the new
	// DescribeCluster can only have come from the warm one.
	if warmAfter == 0 || coldAfter != 0 {
		t.Errorf("after the swap: %d invocations in a warm environment of before, %d cold starts; want > 0 and 0",
			warmAfter, coldAfter)
	}
}

// halves splits targets into two parts with Spot warnings and terminate
// hooks in each, the larger one second.
func halves(targets []fleet.Node) (first, rest []fleet.Node) {
	var spot, hook int
	for _, n := range targets {
		k := &spot
		if n.Hook != nil {
			k = &hook
		}
		if *k%2 == 1 {
			first = append(first, n)
		} else {
			rest = append(rest, n)
		}
		*k++
	}
	return first, rest
}
