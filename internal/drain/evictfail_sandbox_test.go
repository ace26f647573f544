package drain_test

// Eviction failure paths on the real API server.

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

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
	// minAvailable 0: each budget alone would allow the eviction (and
	// needs no controller to compute its status).
	s.env.PDB(ctx, "by-app", map[string]string{"app": "web"}, fixture.MinAvailable(0))
	s.env.PDB(ctx, "by-tier", map[string]string{"tier": "front"}, fixture.MinAvailable(0))
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
	// A namespace of the test's own, deleted during the drain; the
	// finalizer keeps the pod, and so the namespace, terminating.
	ns := s.env.Namespace + "-ng"
	held := s.podInOwnNamespace(t, ctx, ns, "held", n.Name)
	s.beforeFirstEviction(func() {
		if err := s.client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
			t.Errorf("deleting namespace: %v", err)
		}
		// Admission judges from its own cache: wait until it refuses a
		// create in the namespace, as it will refuse the eviction.
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probe"}}
		poll(t, ctx, "namespace refusing creates", func(ctx context.Context) (bool, error) {
			_, err := s.client.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			return apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause), nil
		})
	})
	key := ns + "/" + held.Name
	runCtx, stop := s.stopOn(ctx, drain.EventGone, key)
	defer stop()
	released := make(chan struct{})
	go func() {
		// Once the namespace controller has marked the pod for deletion,
		// let it go.
		defer close(released)
		poll(t, runCtx, "pod terminating", func(ctx context.Context) (bool, error) {
			p, err := s.client.CoreV1().Pods(ns).Get(ctx, held.Name, metav1.GetOptions{})
			return err == nil && p.DeletionTimestamp != nil, nil
		})
		releasePod(t, ctx, s, ns, held.Name)
	}()
	rep, err := d.Run(runCtx, drain.Request{Node: n.Name, Kind: "asg-lifecycle", Evict: true})
	<-released
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if diff := cmp.Diff(drain.Report{Node: n.Name, Done: true}, rep, cmpIgnoreElapsed); diff != "" {
		t.Errorf("report mismatch (-want +got):\n%s", diff)
	}
	if s.events.index(drain.EventFailed, key) >= 0 || s.events.index(drain.EventEvicted, key) >= 0 {
		t.Errorf("the namespace's pod was reported failed or evicted; want it waited for")
	}
}

// podInOwnNamespace creates namespace ns (removed at the end of the test)
// and in it a pod bound to node, held by a finalizer.
func (s *scene) podInOwnNamespace(t *testing.T, ctx context.Context, ns, name, node string) *corev1.Pod {
	t.Helper()
	c := s.client.CoreV1()
	if _, err := c.Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		releasePod(t, ctx, s, ns, name)
		// A namespace already terminating answers a second delete with a
		// conflict: that is as good as done.
		if err := c.Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			t.Errorf("deleting namespace %s: %v", ns, err)
		}
	})
	if _, err := c.ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating service account: %v", err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Finalizers: []string{"drainpipe.test/hold"}},
		Spec: corev1.PodSpec{NodeName: node, TerminationGracePeriodSeconds: ptr.To[int64](0), AutomountServiceAccountToken: ptr.To(false),
			Containers: []corev1.Container{{Name: "app", Image: fixture.Image}}},
	}
	created, err := c.Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating pod: %v", err)
	}
	return created
}

// releasePod clears the finalizers of pod ns/name, if it is still there.
func releasePod(t *testing.T, ctx context.Context, s *scene, ns, name string) {
	patch := []byte(`{"metadata":{"finalizers":null}}`)
	_, err := s.client.CoreV1().Pods(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("releasing pod %s/%s: %v", ns, name, err)
	}
}

// poll checks cond until it holds, reporting (not failing: it may run off
// the test goroutine) when ctx ends first.
func poll(t *testing.T, ctx context.Context, what string, cond wait.ConditionWithContextFunc) {
	if err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, cond); err != nil {
		t.Errorf("waiting for %s: %v", what, err)
	}
}
