package drain_test

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/test/sandbox"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

func TestMain(m *testing.M) { sandbox.Main(m) }

// runTimeout bounds a Run expected to finish: generous, the machine is shared.
const runTimeout = 60 * time.Second

// scene is one test's sandbox corner and a drainer whose writes are counted.
type scene struct {
	env    *fixture.Env
	client kubernetes.Interface
	writes *atomic.Int64 // requests other than GET (watches are GETs)
	events *eventLog
	// via, when set, sends the drainer's requests instead of the
	// transport (which it gets), to provoke server answers.
	via atomic.Pointer[func(*http.Request, http.RoundTripper) (*http.Response, error)]
}

func newScene(t *testing.T, cfg drain.Config) (*scene, *drain.Drainer) {
	t.Helper()
	sb := sandbox.ForTest(t)
	t.Parallel()
	env := fixture.New(t, sb.RESTConfig())
	rc := sb.RESTConfig()
	drain.TuneRESTConfig(rc, 0, 0)
	s := &scene{env: env, writes: &atomic.Int64{}, events: &eventLog{}}
	rc.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method != http.MethodGet {
				s.writes.Add(1)
			}
			if via := s.via.Load(); via != nil {
				return (*via)(r, rt)
			}
			return rt.RoundTrip(r)
		})
	}
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatalf("creating client: %v", err)
	}
	s.client = env.Client
	cfg.OnEvent = s.events.add
	if announce := cfg.Announce; announce != nil {
		cfg.Announce = func(ctx context.Context, e drain.Event) { s.events.add(e); announce(ctx, e) }
	}
	var log *slog.Logger
	if testing.Verbose() {
		log = slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return s, drain.New(client, cfg, log)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// eventLog records OnEvent calls in order and passes each to on, if set.
type eventLog struct {
	mu     sync.Mutex
	events []drain.Event
	on     func(drain.Event)
}

func (l *eventLog) add(e drain.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
	if l.on != nil {
		l.on(e)
	}
}

// onEvent sets the callback for later events.
func (l *eventLog) onEvent(f func(drain.Event)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.on = f
}

// index returns the position of the first event of type typ for pod (any
// pod when empty), or -1.
func (l *eventLog) index(typ drain.EventType, pod string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.IndexFunc(l.events, func(e drain.Event) bool { return e.Type == typ && (pod == "" || e.Pod == pod) })
}

func (s *scene) key(pod string) string { return s.env.Namespace + "/" + pod }

func (s *scene) keys(pods []corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, s.key(p.Name))
	}
	slices.Sort(out)
	return out
}

// podsOn returns the Env's pods on node matching selector, failing unless
// there are want of them.
func (s *scene) podsOn(t *testing.T, ctx context.Context, node, selector string, want int) []corev1.Pod {
	t.Helper()
	var out []corev1.Pod
	for _, p := range s.env.Pods(ctx, selector) {
		if p.Spec.NodeName == node {
			out = append(out, p)
		}
	}
	if len(out) != want {
		t.Fatalf("%d pods %q on %s, want %d", len(out), selector, node, want)
	}
	return out
}

func TestCordonAndRerunSendNoWrite(t *testing.T) {
	s, d := newScene(t, drain.DefaultConfig())
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	nodes := s.env.Nodes(ctx, 2, fixture.NodeOptions{})
	s.env.Deployment(ctx, "web", 3, fixture.OnNode(nodes[0].Name))
	web := s.podsOn(t, ctx, nodes[0].Name, "app=web", 3)
	deadline := time.Now().Add(10 * time.Minute).Truncate(time.Second)
	req := drain.Request{Node: nodes[0].Name, Kind: "spot-interruption", EventID: "ev-1", Deadline: deadline, Evict: true}

	first, err := d.Run(ctx, req)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if diff := cmp.Diff(drain.Report{Node: req.Node, Evicted: s.keys(web), Done: true}, first,
		cmpIgnoreElapsed); diff != "" {
		t.Errorf("first Run report mismatch (-want +got):\n%s", diff)
	}
	node, err := s.client.CoreV1().Nodes().Get(ctx, req.Node, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("getting node: %v", err)
	}
	wantTaint := corev1.Taint{Key: drain.TaintKey, Value: "spot-interruption", Effect: corev1.TaintEffectNoSchedule}
	got := map[string]any{
		"unschedulable": node.Spec.Unschedulable,
		"taint":         slices.Contains(node.Spec.Taints, wantTaint),
		"label":         node.Labels[drain.ExcludeFromLBLabel],
		"event_id":      node.Annotations[drain.AnnotationEventID],
		"kind":          node.Annotations[drain.AnnotationKind],
		"deadline":      node.Annotations[drain.AnnotationDeadline],
	}
	want := map[string]any{
		"unschedulable": true, "taint": true, "label": "true", "event_id": "ev-1",
		"kind": "spot-interruption", "deadline": deadline.UTC().Format(time.RFC3339),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cordoned node mismatch (-want +got):\n%s", diff)
	}
	firstSeen := node.Annotations[drain.AnnotationFirstSeen]

	// The rerun finds everything done: no write at all, node untouched.
	s.writes.Store(0)
	again, err := d.Run(ctx, req)
	if err != nil {
		t.Fatalf("rerun: %v", err)
	}
	if diff := cmp.Diff(drain.Report{Node: req.Node, Done: true}, again, cmpIgnoreElapsed); diff != "" {
		t.Errorf("rerun report mismatch (-want +got):\n%s", diff)
	}
	if n := s.writes.Load(); n != 0 {
		t.Errorf("rerun sent %d write requests, want 0", n)
	}
	after, err := s.client.CoreV1().Nodes().Get(ctx, req.Node, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("getting node: %v", err)
	}
	if after.ResourceVersion != node.ResourceVersion {
		t.Errorf("rerun changed the node: resourceVersion %s -> %s", node.ResourceVersion, after.ResourceVersion)
	}

	// A later event updates the record but keeps first-seen.
	req.EventID, req.Evict = "ev-2", false
	if _, err := d.Run(ctx, req); err != nil {
		t.Fatalf("Run for a second event: %v", err)
	}
	after, err = s.client.CoreV1().Nodes().Get(ctx, req.Node, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("getting node: %v", err)
	}
	gotAnn := [2]string{after.Annotations[drain.AnnotationEventID], after.Annotations[drain.AnnotationFirstSeen]}
	if wantAnn := [2]string{"ev-2", firstSeen}; gotAnn != wantAnn {
		t.Errorf("annotations event-id, first-seen = %q, want %q", gotAnn, wantAnn)
	}
}

// Blocks (the drain report's refusal details) is checked by the report tests.
var cmpIgnoreElapsed = cmp.FilterPath(func(p cmp.Path) bool {
	return p.String() == "Elapsed" || p.String() == "Blocks" || p.String() == "BlockedSince"
}, cmp.Ignore())

func TestMissingNodeIsNotFound(t *testing.T) {
	_, d := newScene(t, drain.DefaultConfig())
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	_, err := d.Run(ctx, drain.Request{Node: "ip-10-255-255-254.us-west-2.compute.internal", Kind: "spot-interruption", Evict: true})
	if !apierrors.IsNotFound(err) {
		t.Errorf("Run on a missing node: error %v, want one for which apierrors.IsNotFound holds", err)
	}
}

func TestSkipsDaemonSetAndMirrorPods(t *testing.T) {
	cfg := drain.DefaultConfig()
	s, d := newScene(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	nodes := s.env.Nodes(ctx, 2, fixture.NodeOptions{})
	n := nodes[0]
	s.env.DaemonSet(ctx, "agent")
	mirror := s.env.MirrorPod(ctx, n, "kube-proxy")
	bare := s.env.Pod(ctx, "bare", fixture.BoundTo(n.Name))
	scratch := s.env.Pod(ctx, "scratch", fixture.BoundTo(n.Name), fixture.EmptyDir())
	agent := s.podsOn(t, ctx, n.Name, "app=agent", 1)[0]

	rep, err := d.Run(ctx, drain.Request{Node: n.Name, Kind: "spot-interruption", Evict: true})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := drain.Report{
		Node:    n.Name,
		Evicted: []string{s.key(bare.Name), s.key(scratch.Name)},
		Skipped: []drain.Skipped{{Pod: s.key(agent.Name), Reason: "daemonset"}, {Pod: s.key(mirror.Name), Reason: "mirror pod"}},
		Done:    true,
	}
	slices.SortFunc(want.Skipped, func(a, b drain.Skipped) int { return strings.Compare(a.Pod, b.Pod) })
	if diff := cmp.Diff(want, rep, cmpIgnoreElapsed); diff != "" {
		t.Errorf("report mismatch (-want +got):\n%s", diff)
	}
	for _, p := range []corev1.Pod{agent, *mirror} {
		got, err := s.client.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			t.Errorf("pod %s after drain: %v", p.Name, err)
			continue
		}
		if got.UID != p.UID || got.DeletionTimestamp != nil {
			t.Errorf("pod %s was touched: uid %s -> %s, deletionTimestamp %v", p.Name, p.UID, got.UID, got.DeletionTimestamp)
		}
	}
}

func TestStuckFinalizerIsReportedThenResumed(t *testing.T) {
	s, d := newScene(t, drain.DefaultConfig())
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	n := s.env.Node(ctx, fixture.NodeOptions{})
	stuck := s.env.Pod(ctx, "stuck", fixture.BoundTo(n.Name), fixture.Finalizers("drainpipe.test/hold"))
	req := drain.Request{Node: n.Name, Kind: "spot-interruption", Evict: true}

	// Stop the first Run once the eviction is accepted: the pod cannot go.
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	s.events.onEvent(func(e drain.Event) {
		if e.Type == drain.EventEvicted && e.Pod == s.key(stuck.Name) {
			stop()
		}
	})
	rep, err := d.Run(runCtx, req)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := drain.Report{Node: n.Name, Evicted: []string{s.key(stuck.Name)}, Terminating: []string{s.key(stuck.Name)}}
	if diff := cmp.Diff(want, rep, cmpIgnoreElapsed); diff != "" {
		t.Errorf("report mismatch (-want +got):\n%s", diff)
	}

	// Once the finalizer is gone, a rerun waits for the pod and is done,
	// without evicting it again.
	s.env.RemoveFinalizers(ctx, stuck.Name)
	rep, err = d.Run(ctx, req)
	if err != nil {
		t.Fatalf("rerun: %v", err)
	}
	if diff := cmp.Diff(drain.Report{Node: n.Name, Done: true}, rep, cmpIgnoreElapsed); diff != "" {
		t.Errorf("rerun report mismatch (-want +got):\n%s", diff)
	}
}
