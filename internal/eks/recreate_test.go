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
// the same name has a new endpoint and CA. After FailureLimit TLS or
// connection failures in a row the cached endpoint, CA and client are
// dropped, so the next Client describes the cluster again and works,
// without waiting for a new container.
func TestRecreatedClusterIsReachedAgain(t *testing.T) {
	ctx := testCtx(t)
	old := newAPIServer(t, 0, nil)
	c, fake := newClusters(t, newClock(), nil)
	fake.AddCluster(awsfake.Cluster{Name: "blue", Endpoint: old.URL, CAData: old.caPEM()})
	get := func() error { return getNode(ctx, c) }
	if err := get(); err != nil {
		t.Fatal(err)
	}

	// Recreated: the old endpoint refuses connections, the new one
	// presents a certificate of another CA.
	old.Close()
	recreated := newAPIServer(t, 0, nil)
	fake.AddCluster(awsfake.Cluster{Name: "blue", Endpoint: recreated.URL, CAData: recreated.caPEM()})

	for i := range FailureLimit {
		if err := get(); err == nil {
			t.Fatalf("request %d to the deleted cluster's endpoint succeeded", i+1)
		}
	}
	if err := get(); err != nil {
		t.Fatalf("after %d failures the recreated cluster is still unreachable: %v", FailureLimit, err)
	}
	if n := len(fake.CallsTo("DescribeCluster")); n != 2 {
		t.Errorf("DescribeCluster calls = %d, want 2 (once per cluster incarnation)", n)
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
