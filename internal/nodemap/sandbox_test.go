package nodemap

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/drainpipe/drainpipe/internal/instance"
	"github.com/drainpipe/drainpipe/test/sandbox"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

func TestMain(m *testing.M) { sandbox.Main(m) }

// counter counts API requests by method and whether they carried a
// continue token.
type counter struct {
	base                   http.RoundTripper
	mu                     sync.Mutex
	gets, lists, continued int
}

func (c *counter) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	switch {
	case r.URL.Path == "/api/v1/nodes" && r.URL.Query().Get("continue") != "":
		c.lists++
		c.continued++
	case r.URL.Path == "/api/v1/nodes":
		c.lists++
	default:
		c.gets++
	}
	c.mu.Unlock()
	return c.base.RoundTrip(r)
}

func (c *counter) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gets, c.lists, c.continued = 0, 0, 0
}

func TestFindOnSandbox(t *testing.T) {
	sb := sandbox.ForTest(t)
	env := fixture.New(t, sb.RESTConfig())
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	eks := env.Node(ctx, fixture.NodeOptions{})
	custom := env.Node(ctx, fixture.NodeOptions{Name: "worker-" + env.Pool + ".corp.example"})
	byID := env.Node(ctx, fixture.NodeOptions{InstanceID: "i-0" + env.Pool + "0000000000a", Name: "i-0" + env.Pool + "0000000000a"})
	// Pad the node list so paging (limit 2) takes several pages.
	env.Nodes(ctx, 4, fixture.NodeOptions{})

	cnt := &counter{}
	cfg := rest.CopyConfig(sb.RESTConfig())
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { cnt.base = rt; return cnt }
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The EC2 private DNS name of a node with a custom hostname.
	dnsOf := func(n *corev1.Node) string {
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP {
				return fixture.PrivateDNSName(a.Address, "us-west-2")
			}
		}
		t.Fatalf("node %s has no internal IP", n.Name)
		return ""
	}

	tests := []struct {
		name      string
		inst      instance.Instance
		want      string
		wantErr   error
		wantLists bool
	}{
		{"EKS node by DNS name", instance.Instance{ID: fixture.InstanceID(eks), PrivateDNSName: eks.Name}, eks.Name, nil, false},
		{"custom hostname by providerID", instance.Instance{ID: fixture.InstanceID(custom), PrivateDNSName: dnsOf(custom)},
			custom.Name, nil, true},
		{"instance-ID node name", instance.Instance{ID: fixture.InstanceID(byID), PrivateDNSName: "ip-10-9-9-9.us-west-2.compute.internal"},
			byID.Name, nil, false},
		{"DNS name of another instance", instance.Instance{ID: "i-0" + env.Pool + "00000000fff", PrivateDNSName: eks.Name},
			"", ErrNotFound, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cnt.reset()
			node, err := find(ctx, client, tt.inst, 2)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("find() error = %v, want %v", err, tt.wantErr)
			}
			var got string
			if node != nil {
				got = node.Name
			}
			if got != tt.want {
				t.Errorf("find() = %q, want %q", got, tt.want)
			}
			cnt.mu.Lock()
			defer cnt.mu.Unlock()
			if (cnt.lists > 0) != tt.wantLists {
				t.Errorf("lists = %d, want lists %v", cnt.lists, tt.wantLists)
			}
			if tt.wantErr != nil && cnt.continued == 0 {
				t.Errorf("a miss listed %d page(s) without a continue token; want every page visited", cnt.lists)
			}
		})
	}
}
