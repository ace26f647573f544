package drain_test

// The drain engine's failure paths, produced on the real API server: each
// test makes the server give the answer, then checks what the Run did.

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

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

func isList(r *http.Request) bool {
	return r.Method == http.MethodGet && r.URL.Path == "/api/v1/pods" && r.URL.Query().Get("watch") != "true"
}

func isEviction(r *http.Request) bool {
	return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/eviction")
}

// teeBody copies what a response body yields into buf.
type teeBody struct {
	io.ReadCloser
	mu  *sync.Mutex
	buf *bytes.Buffer
}

func (b teeBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.mu.Lock()
	b.buf.Write(p[:n])
	b.mu.Unlock()
	return n, err
}

func TestWatchExpiryRelists(t *testing.T) {
	s, d := newScene(t, drain.DefaultConfig())
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	nodes := s.env.Nodes(ctx, 2, fixture.NodeOptions{})
	s.env.Deployment(ctx, "web", 2, fixture.OnNode(nodes[0].Name), fixture.GracePeriod(1))
	web := s.podsOn(t, ctx, nodes[0].Name, "app=web", 2)

	// The first watch asks for a resourceVersion long compacted away: the
	// server answers 410 Expired and the Run must list again.
	var watches, lists atomic.Int64
	var mu sync.Mutex
	first := &bytes.Buffer{}
	s.through(func(r *http.Request, rt http.RoundTripper) (*http.Response, error) {
		switch {
		case isList(r):
			lists.Add(1)
		case isWatch(r) && watches.Add(1) == 1:
			r = r.Clone(r.Context())
			q := r.URL.Query()
			q.Set("resourceVersion", "1")
			r.URL.RawQuery = q.Encode()
			resp, err := rt.RoundTrip(r)
			if err == nil {
				resp.Body = teeBody{ReadCloser: resp.Body, mu: &mu, buf: first}
			}
			return resp, err
		}
		return rt.RoundTrip(r)
	})
	rep, err := d.Run(ctx, drain.Request{Node: nodes[0].Name, Kind: "asg-lifecycle", Evict: true})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if diff := cmp.Diff(drain.Report{Node: nodes[0].Name, Evicted: s.keys(web), Done: true}, rep, cmpIgnoreElapsed); diff != "" {
		t.Errorf("report mismatch (-want +got):\n%s", diff)
	}
	mu.Lock()
	answer := first.String()
	mu.Unlock()
	if !strings.Contains(answer, `"code":410`) {
		t.Fatalf("first watch answered %q, want a 410 Expired error", answer)
	}
	// The initial list, the relist after the 410, the final check.
	if n := lists.Load(); n < 3 {
		t.Errorf("%d pod lists, want at least 3 (one a relist after the 410)", n)
	}
	if n := watches.Load(); n < 2 {
		t.Errorf("%d watches, want a new one after the 410", n)
	}
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

// beforeFirstEviction runs f once, before the drainer's first eviction
// request is sent.
func (s *scene) beforeFirstEviction(f func()) {
	var once sync.Once
	s.through(func(r *http.Request, rt http.RoundTripper) (*http.Response, error) {
		if isEviction(r) {
			once.Do(f)
		}
		return rt.RoundTrip(r)
	})
}

func TestEvictionOfAPodAlreadyGone(t *testing.T) {
	s, d := newScene(t, drain.DefaultConfig())
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	n := s.env.Node(ctx, fixture.NodeOptions{})
	gone := s.env.Pod(ctx, "gone", fixture.BoundTo(n.Name))
	// Deleted between the Run's list and its eviction: the server
	// answers 404.
	s.beforeFirstEviction(func() {
		if err := s.client.CoreV1().Pods(gone.Namespace).Delete(ctx, gone.Name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("deleting pod: %v", err)
		}
		poll(t, ctx, "pod gone", func(ctx context.Context) (bool, error) {
			_, err := s.client.CoreV1().Pods(gone.Namespace).Get(ctx, gone.Name, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		})
	})
	rep, err := d.Run(ctx, drain.Request{Node: n.Name, Kind: "asg-lifecycle", Evict: true})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if diff := cmp.Diff(drain.Report{Node: n.Name, Done: true}, rep, cmpIgnoreElapsed); diff != "" {
		t.Errorf("report mismatch (-want +got):\n%s", diff)
	}
}

func TestEvictionRefusedForGood(t *testing.T) {
	s, d := newScene(t, drain.DefaultConfig())
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	n := s.env.Node(ctx, fixture.NodeOptions{})
	// Two budgets select the pod: the eviction handler answers 500, for
	// good.
	web := s.env.Pod(ctx, "web", fixture.BoundTo(n.Name), fixture.Labels(map[string]string{"tier": "front"}))
	s.env.PDB(ctx, "by-app", map[string]string{"app": "web"}, fixture.MaxUnavailable(1))
	s.env.PDB(ctx, "by-tier", map[string]string{"tier": "front"}, fixture.MaxUnavailable(1))
	rep, err := d.Run(ctx, drain.Request{Node: n.Name, Kind: "asg-lifecycle", Evict: true})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(rep.Failed) != 1 || rep.Failed[0].Pod != s.key(web.Name) || !strings.Contains(rep.Failed[0].Reason, "more than one PodDisruptionBudget") {
		t.Errorf("report = %+v, want %s failed for being under two budgets", rep, web.Name)
	}
	if rep.Done || len(rep.BlockedByPDB)+len(rep.Pending)+len(rep.Evicted) != 0 {
		t.Errorf("report = %+v, want only the failure", rep)
	}
	cur, err := s.client.CoreV1().Pods(web.Namespace).Get(ctx, web.Name, metav1.GetOptions{})
	if err != nil || cur.DeletionTimestamp != nil {
		t.Errorf("pod after the refusal: %v, deletionTimestamp %v; want it untouched", err, cur.DeletionTimestamp)
	}
}

func TestEvictionInATerminatingNamespaceWaits(t *testing.T) {
	s, d := newScene(t, drain.DefaultConfig())
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	n := s.env.Node(ctx, fixture.NodeOptions{})
	// The finalizer keeps the pod, and so its namespace, terminating.
	held := s.env.Pod(ctx, "held", fixture.BoundTo(n.Name), fixture.Finalizers("drainpipe.test/hold"))
	s.beforeFirstEviction(func() {
		if err := s.client.CoreV1().Namespaces().Delete(ctx, s.env.Namespace, metav1.DeleteOptions{}); err != nil {
			t.Errorf("deleting namespace: %v", err)
		}
		// Admission judges from its own cache: wait until it refuses a
		// create in the namespace, as it will refuse the eviction.
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probe"}}
		poll(t, ctx, "namespace refusing creates", func(ctx context.Context) (bool, error) {
			_, err := s.client.CoreV1().ConfigMaps(s.env.Namespace).Create(ctx, cm, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			return apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause), nil
		})
	})
	runCtx, stop := s.stopOn(ctx, drain.EventGone, s.key(held.Name))
	defer stop()
	released := make(chan struct{})
	go func() {
		// Once the namespace controller has marked the pod for deletion,
		// let it go.
		defer close(released)
		poll(t, runCtx, "pod terminating", func(ctx context.Context) (bool, error) {
			p, err := s.client.CoreV1().Pods(held.Namespace).Get(ctx, held.Name, metav1.GetOptions{})
			return err == nil && p.DeletionTimestamp != nil, nil
		})
		s.env.RemoveFinalizers(ctx, held.Name)
	}()
	defer func() { <-released }()
	rep, err := d.Run(runCtx, drain.Request{Node: n.Name, Kind: "asg-lifecycle", Evict: true})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if diff := cmp.Diff(drain.Report{Node: n.Name, Done: true}, rep, cmpIgnoreElapsed); diff != "" {
		t.Errorf("report mismatch (-want +got):\n%s", diff)
	}
	if s.events.index(drain.EventFailed, s.key(held.Name)) >= 0 || s.events.index(drain.EventEvicted, s.key(held.Name)) >= 0 {
		t.Errorf("the namespace's pod was reported failed or evicted; want it waited for")
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

// poll checks cond until it holds, reporting (not failing: it may run off
// the test goroutine) when ctx ends first.
func poll(t *testing.T, ctx context.Context, what string, cond wait.ConditionWithContextFunc) {
	if err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, cond); err != nil {
		t.Errorf("waiting for %s: %v", what, err)
	}
}
