package eks

import (
	"sync"
	"testing"

	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/test/awsfake"
)

// A wave of records for one cluster builds one client with one
// DescribeCluster, and every caller gets that client.
func TestClientConcurrentCallersShareOneBuild(t *testing.T) {
	api := newAPIServer(t, 0, nil)
	c, fake := newClusters(t, newClock(), nil)
	fake.AddCluster(awsfake.Cluster{Name: "blue", Endpoint: api.URL, CAData: api.caPEM()})
	ctx := testCtx(t)

	const callers = 20
	got := make([]kubernetes.Interface, callers)
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() { got[i], errs[i] = c.Client(ctx, "blue") })
	}
	wg.Wait()

	for i := range callers {
		if errs[i] != nil {
			t.Fatalf("caller %d: %v", i, errs[i])
		}
		if got[i] != got[0] {
			t.Errorf("caller %d got a different client", i)
		}
	}
	if n := len(fake.CallsTo("DescribeCluster")); n != 1 {
		t.Errorf("DescribeCluster calls = %d, want 1", n)
	}
}
