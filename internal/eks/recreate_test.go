package eks

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/drainpipe/drainpipe/test/awsfake"
)

// TestRecreatedClusterIsReachedAgain: a cluster deleted and recreated under
// the same name has a new endpoint and CA. The first TLS or connection
// failure describes the cluster again; the description changed, so the
// cached endpoint, CA and client are dropped at once and the next request
// reaches the recreated cluster, without waiting for a new container or
// FailureLimit failures (a lone event's deliveries would be spent on them).
func TestRecreatedClusterIsReachedAgain(t *testing.T) {
	old, fake, get := reachedCluster(t)

	// Recreated: the old endpoint refuses connections, the new one
	// presents a certificate of another CA.
	old.Close()
	recreated := newAPIServer(t, 0, nil)
	fake.AddCluster(awsfake.Cluster{Name: "blue", Endpoint: recreated.URL, CAData: recreated.caPEM()})

	if err := get(); err == nil {
		t.Fatal("a request to the deleted cluster's endpoint succeeded")
	}
	if err := get(); err != nil {
		t.Fatalf("after one failure the recreated cluster is still unreachable: %v", err)
	}
	if n := len(fake.CallsTo("DescribeCluster")); n != 2 {
		t.Errorf("DescribeCluster calls = %d, want 2 (once per cluster incarnation)", n)
	}
}

// TestUnchangedClusterKeepsItsClient: an endpoint failing while
// DescribeCluster still answers the same endpoint and CA (an outage, not
// a recreation) is described again once, and the client is kept until
// FailureLimit failures in a row.
func TestUnchangedClusterKeepsItsClient(t *testing.T) {
	api, fake, get := reachedCluster(t)
	api.Close()
	for i := range FailureLimit {
		if err := get(); err == nil {
			t.Fatalf("request %d to a closed endpoint succeeded", i+1)
		}
	}
	if n := len(fake.CallsTo("DescribeCluster")); n != 2 {
		t.Errorf("DescribeCluster calls after %d failures = %d, want 2 (the first, and one check)", FailureLimit, n)
	}
	if err := get(); err == nil {
		t.Fatal("a request to a closed endpoint succeeded")
	}
	// Rebuilt after FailureLimit failures, and the new client's first
	// failure checked: two calls per FailureLimit failures at most.
	if n := len(fake.CallsTo("DescribeCluster")); n != 4 {
		t.Errorf("DescribeCluster calls after the drop = %d, want 4 (rebuilt, checked)", n)
	}
}

// TestCAChangeAtSameEndpoint: the same address now serving another CA's
// certificate (a TLS failure, not a connection one) also drops the cache.
func TestCAChangeAtSameEndpoint(t *testing.T) {
	ctx := testCtx(t)
	api := newAPIServer(t, 0, nil)
	c, fake := newClusters(t, newClock(), nil)
	// Described with another CA: every request fails TLS verification
	// until DescribeCluster tells the right one.
	fake.AddCluster(awsfake.Cluster{Name: "blue", Endpoint: api.URL, CAData: strangerCA(t)})
	get := func() error { return getNode(ctx, c) }
	for i := range FailureLimit {
		if err := get(); err == nil {
			t.Fatalf("request %d with the wrong CA succeeded", i+1)
		}
	}
	fake.AddCluster(awsfake.Cluster{Name: "blue", Endpoint: api.URL, CAData: api.caPEM()})
	if err := get(); err != nil {
		t.Fatalf("after the CA was described again: %v", err)
	}
}

// TestOtherErrorsKeepTheCache: API errors (the server answered) do not
// count, and a success in between resets the count.
func TestOtherErrorsKeepTheCache(t *testing.T) {
	ctx := testCtx(t)
	api := newAPIServer(t, 2*FailureLimit, nil) // 401s, each re-signed once
	c, fake := newClusters(t, newClock(), nil)
	fake.AddCluster(awsfake.Cluster{Name: "blue", Endpoint: api.URL, CAData: api.caPEM()})
	for range 2 * FailureLimit {
		k, err := c.Client(ctx, "blue")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = k.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	}
	if n := len(fake.CallsTo("DescribeCluster")); n != 1 {
		t.Errorf("DescribeCluster calls = %d, want 1: answered requests must not drop the cache", n)
	}
}

// reachedCluster serves cluster blue, described on a fake, and gets a
// node of it once; get gets it again.
func reachedCluster(t *testing.T) (api *apiServer, fake *awsfake.Server, get func() error) {
	t.Helper()
	ctx := testCtx(t)
	api = newAPIServer(t, 0, nil)
	c, fake := newClusters(t, newClock(), nil)
	fake.AddCluster(awsfake.Cluster{Name: "blue", Endpoint: api.URL, CAData: api.caPEM()})
	get = func() error { return getNode(ctx, c) }
	if err := get(); err != nil {
		t.Fatal(err)
	}
	return api, fake, get
}

// getNode gets a node of cluster blue through c.
func getNode(ctx context.Context, c *Clusters) error {
	k, err := c.Client(ctx, "blue")
	if err != nil {
		return err
	}
	_, err = k.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	return err
}

// strangerCA is a PEM CA certificate that signed nothing the tests serve
// (httptest's servers all share one certificate).
func strangerCA(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "stranger"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
