package eks

import (
	"strings"
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/test/awsfake"
)

// A description without what a client needs is an error naming what is
// missing, and nothing is cached.
func TestDescribeIncomplete(t *testing.T) {
	tests := []struct {
		name    string
		cluster awsfake.Cluster
		want    string
	}{
		{"creating", awsfake.Cluster{Name: "blue", Status: "CREATING", CAData: []byte("ca")}, "no endpoint (status CREATING)"},
		{"plain http", awsfake.Cluster{Name: "blue", Endpoint: "http://10.0.0.1", CAData: []byte("ca")}, "plain http"},
		{"no CA", awsfake.Cluster{Name: "blue", Endpoint: "https://blue.example"}, "no certificate authority"},
	}
	for _, tt := range tests {
		c, fake := newClusters(t, newClock(), nil)
		fake.AddCluster(tt.cluster)
		_, err := c.Client(testCtx(t), "blue")
		if err == nil || !strings.Contains(err.Error(), "describing cluster blue") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Client error %v, want %q", tt.name, err, tt.want)
		}
		if _, err := c.Client(testCtx(t), "blue"); err == nil {
			t.Errorf("%s: second Client succeeded", tt.name)
		}
		if n := len(fake.CallsTo("DescribeCluster")); n != 2 {
			t.Errorf("%s: %d DescribeCluster calls, want 2 (the failure not cached)", tt.name, n)
		}
	}
}

// An https override with its CA, or an http one on loopback, needs no
// description.
func TestOverrideNeedsNoDescription(t *testing.T) {
	for _, ep := range []Endpoint{{URL: "https://blue.example", CAData: []byte("ca")}, {URL: "http://127.0.0.1:1"}} {
		c, fake := newClusters(t, newClock(), map[string]Endpoint{"blue": ep})
		got, err := c.endpoint(testCtx(t), "blue")
		if err != nil || got.URL != ep.URL || string(got.CAData) != string(ep.CAData) {
			t.Errorf("endpoint(%v) = %v, %v; want the override", ep, got, err)
		}
		if n := len(fake.Calls()); n != 0 {
			t.Errorf("override %v: %d AWS calls, want none", ep, n)
		}
	}
	c, fake := newClusters(t, newClock(), map[string]Endpoint{"blue": {URL: "https://blue.example"}})
	fake.Inject("DescribeCluster", awsfake.AccessDenied, 1)
	if _, err := c.endpoint(testCtx(t), "blue"); err == nil {
		t.Error("an https override without CA was used though its CA could not be described")
	}
}

func TestDefaults(t *testing.T) {
	fake := awsfake.New()
	defer fake.Close()
	c := New(fake.Config(), Options{})
	if c.opts.QPS != DefaultQPS || c.opts.Burst != DefaultBurst {
		t.Errorf("default QPS, burst = %v, %d", c.opts.QPS, c.opts.Burst)
	}
	c = New(fake.Config(), Options{QPS: 3, Burst: 4})
	if c.opts.QPS != 3 || c.opts.Burst != 4 {
		t.Errorf("QPS, burst = %v, %d; want 3, 4", c.opts.QPS, c.opts.Burst)
	}
	if rc := c.restConfig("blue", Endpoint{URL: "https://blue.example"}, nil, nil); rc.QPS != 3 || rc.Burst != 4 || rc.Host != "https://blue.example" {
		t.Errorf("rest config QPS %v, burst %d, host %q", rc.QPS, rc.Burst, rc.Host)
	}
	if _, err := c.Client(testCtx(t), ""); err == nil {
		t.Error("Client of an empty cluster name succeeded")
	}
	api := newAPIServer(t, 0, nil)
	path := writeKubeconfig(t, "blue", map[string]*apiServer{"blue": api})
	l, err := NewLocal(path, 0, 0)
	if err != nil || l.qps != DefaultQPS || l.burst != DefaultBurst {
		t.Errorf("NewLocal defaults: %v, %d, %v", l.qps, l.burst, err)
	}
	l, err = NewLocal(path, 3, 4)
	if err != nil || l.qps != 3 || l.burst != 4 {
		t.Errorf("NewLocal(3, 4): %v, %d, %v", l.qps, l.burst, err)
	}
}

// A kubeconfig without a current context serves only the clusters named
// after its contexts.
func TestLocalWithoutCurrentContext(t *testing.T) {
	api := newAPIServer(t, 0, nil)
	l, err := NewLocal(writeKubeconfig(t, "", map[string]*apiServer{"blue": api}), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Client(testCtx(t), "green"); err == nil || !strings.Contains(err.Error(), "cluster green") {
		t.Errorf("Client(green) = %v, want an error naming the cluster", err)
	}
	if _, err := l.Client(testCtx(t), ""); err == nil {
		t.Error("Client of an empty name found a context")
	}
	reach(testCtx(t), t, l, "blue")
	if !l.HasContext("blue") || l.HasContext("green") {
		t.Error("HasContext wrong")
	}
}

func TestTokenEdges(t *testing.T) {
	if (Token{}).Bearer() != "" {
		t.Error("a zero Token has a value")
	}
	s := NewSigner(awsConfig(), nil)
	if _, err := s.Token(testCtx(t), ""); err == nil {
		t.Error("a token for no cluster was signed")
	}
	tok, err := s.Token(testCtx(t), "blue")
	if err != nil {
		t.Fatal(err)
	}
	if age := time.Since(tok.SignedAt); age < 0 || age > time.Minute {
		t.Errorf("a token signed %v ago, want now by the system clock", age)
	}
	s.Invalidate("green", tok) // none cached: nothing happens
	if again, _ := s.Token(testCtx(t), "blue"); again.Bearer() != tok.Bearer() {
		t.Error("invalidating another cluster dropped blue's token")
	}
}
