package eks

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/version"
	"github.com/drainpipe/drainpipe/test/awsfake"
)

// Every request names Drainpipe's version, so an API server's audit log
// shows which version cordoned a node or evicted a pod; both the EKS and
// the kubeconfig clients.
func TestRequestsCarryTheVersion(t *testing.T) {
	want := version.Get().UserAgent()
	api, ctx, clients := bothClients(t)
	for _, k := range clients {
		if _, err := k.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	agents := api.userAgents()
	if len(agents) != 2 {
		t.Fatalf("%d requests, want 2", len(agents))
	}
	for i, a := range agents {
		if a != want {
			t.Errorf("request %d: User-Agent %q, want %q", i, a, want)
		}
	}
}

// bothClients returns a stand-in API server and, for it, an EKS mode
// client and a kubeconfig one, in that order, neither used yet.
func bothClients(t *testing.T) (*apiServer, context.Context, []kubernetes.Interface) {
	t.Helper()
	api := newAPIServer(t, 0, nil)
	c, fake := newClusters(t, newClock(), nil)
	fake.AddCluster(awsfake.Cluster{Name: "blue", Endpoint: api.URL, CAData: api.caPEM()})
	l, err := NewLocal(writeKubeconfig(t, "blue", map[string]*apiServer{"blue": api}), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	var clients []kubernetes.Interface
	for _, get := range []func() (kubernetes.Interface, error){
		func() (kubernetes.Interface, error) { return c.Client(ctx, "blue") },
		func() (kubernetes.Interface, error) { return l.Client(ctx, "blue") },
	} {
		k, err := get()
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, k)
	}
	return api, ctx, clients
}
