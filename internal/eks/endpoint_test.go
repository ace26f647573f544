package eks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drainpipe/drainpipe/test/awsfake"
)

// Rate limits left at 0 take the defaults; set ones stay.
func TestRateLimitDefaults(t *testing.T) {
	fake := awsfake.New()
	t.Cleanup(fake.Close)
	if c := New(fake.Config(), Options{}); c.opts.QPS != DefaultQPS || c.opts.Burst != DefaultBurst {
		t.Errorf("defaults: qps %v, burst %d", c.opts.QPS, c.opts.Burst)
	}
	if c := New(fake.Config(), Options{QPS: 5, Burst: 7}); c.opts.QPS != 5 || c.opts.Burst != 7 {
		t.Errorf("set: qps %v, burst %d", c.opts.QPS, c.opts.Burst)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if l, err := NewLocal(path, 0, 0); err != nil || l.qps != DefaultQPS || l.burst != DefaultBurst {
		t.Errorf("local defaults: %+v, %v", l, err)
	}
	if l, err := NewLocal(path, 5, 7); err != nil || l.qps != 5 || l.burst != 7 {
		t.Errorf("local set: %+v, %v", l, err)
	}
}

// An https override without a CA takes the cluster's from DescribeCluster,
// and fails when that does; a cluster without an endpoint yet says its
// status.
func TestEndpointOverrideAndStatus(t *testing.T) {
	const ca = "-----BEGIN CERTIFICATE-----\nY2E=\n-----END CERTIFICATE-----\n"
	c, fake := newClusters(t, newClock(), map[string]Endpoint{
		"blue": {URL: "https://blue.example"}, "green": {URL: "https://green.example"}})
	fake.AddCluster(awsfake.Cluster{Name: "blue", Endpoint: "https://described.example", CAData: []byte(ca)})
	fake.AddCluster(awsfake.Cluster{Name: "red", Status: "CREATING"})
	ep, err := c.endpoint(testCtx(t), "blue")
	if err != nil || ep.URL != "https://blue.example" || string(ep.CAData) != ca {
		t.Errorf("override without a CA: %+v, %v; want the override's URL with the described CA", ep, err)
	}
	if _, err := c.endpoint(testCtx(t), "green"); err == nil || !strings.Contains(err.Error(), "describing cluster green") {
		t.Errorf("override of a cluster DescribeCluster does not know: %v", err)
	}
	if _, err := c.endpoint(testCtx(t), "red"); err == nil || !strings.HasSuffix(err.Error(), "no endpoint (status CREATING)") {
		t.Errorf("cluster being created: %v", err)
	}
}
