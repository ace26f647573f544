package drain_test

// The drain engine's failure paths, produced on the real API server: each
// test makes the server give the answer, then checks what the Run did.

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// through sets what the drainer's requests go through.
func (s *scene) through(f func(*http.Request, http.RoundTripper) (*http.Response, error)) {
	s.via.Store(&f)
}

func isWatch(r *http.Request) bool {
	return r.Method == http.MethodGet && r.URL.Path == "/api/v1/pods" && r.URL.Query().Get("watch") == "true"
}

func isEviction(r *http.Request) bool {
	return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/eviction")
}

func TestWatchClosedByTheServerReconnects(t *testing.T) {
	s, d := newScene(t, drain.DefaultConfig())
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	n := s.env.Node(ctx, fixture.NodeOptions{})
	// The pod lingers 3 s after its eviction; the server ends each watch
	// after 1 s, so the Run sees the pod go only through a new watch.
	slow := s.env.Pod(ctx, "slow", fixture.BoundTo(n.Name), fixture.GracePeriod(3))
	var watches atomic.Int64
	s.through(func(r *http.Request, rt http.RoundTripper) (*http.Response, error) {
		if isWatch(r) {
			watches.Add(1)
			r = r.Clone(r.Context())
			q := r.URL.Query()
			q.Set("timeoutSeconds", "1")
			r.URL.RawQuery = q.Encode()
		}
		return rt.RoundTrip(r)
	})
	rep, err := d.Run(ctx, drain.Request{Node: n.Name, Kind: "asg-lifecycle", Evict: true})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if diff := cmp.Diff(drain.Report{Node: n.Name, Evicted: []string{s.key(slow.Name)}, Done: true}, rep, cmpIgnoreElapsed); diff != "" {
		t.Errorf("report mismatch (-want +got):\n%s", diff)
	}
	if n := watches.Load(); n < 2 {
		t.Errorf("%d watches, want the Run to reconnect after the server closed one", n)
	}
}

func TestCordonConflictIsRetried(t *testing.T) {
	s, d := newScene(t, drain.DefaultConfig())
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	n := s.env.Node(ctx, fixture.NodeOptions{})
	// Someone (the kubelet, say) updates the node between the drainer's
	// read and its patch: the resourceVersion-guarded patch gets a 409.
	var patches atomic.Int64
	s.through(func(r *http.Request, rt http.RoundTripper) (*http.Response, error) {
		if r.Method == http.MethodPatch && strings.HasSuffix(r.URL.Path, "/nodes/"+n.Name) && patches.Add(1) == 1 {
			patch := []byte(`{"metadata":{"labels":{"drainpipe.test/touched":"yes"}}}`)
			if _, err := s.client.CoreV1().Nodes().Patch(ctx, n.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				t.Errorf("touching node: %v", err)
			}
		}
		return rt.RoundTrip(r)
	})
	rep, err := d.Run(ctx, drain.Request{Node: n.Name, Kind: "spot-interruption"})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !rep.Done || patches.Load() != 2 {
		t.Errorf("report %+v after %d patches, want done after 2", rep, patches.Load())
	}
	node, err := s.client.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("getting node: %v", err)
	}
	want := corev1.Taint{Key: drain.TaintKey, Value: "spot-interruption", Effect: corev1.TaintEffectNoSchedule}
	if !node.Spec.Unschedulable || node.Labels["drainpipe.test/touched"] != "yes" || !hasTaint(node, want) {
		t.Errorf("node after the conflict: unschedulable %v, labels %v, taints %v; want cordoned with the other change kept",
			node.Spec.Unschedulable, node.Labels, node.Spec.Taints)
	}
}

func hasTaint(n *corev1.Node, want corev1.Taint) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == want.Key && t.Value == want.Value && t.Effect == want.Effect {
			return true
		}
	}
	return false
}
