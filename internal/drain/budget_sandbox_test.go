package drain_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// readyWatch follows the Ready pods matching a selector and remembers the
// fewest seen at once.
type readyWatch struct {
	mu    sync.Mutex
	ready map[string]bool
	min   int
	done  chan struct{}
}

func watchReady(t *testing.T, ctx context.Context, client kubernetes.Interface, ns, selector string) (*readyWatch, context.CancelFunc) {
	t.Helper()
	list, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatalf("listing pods: %v", err)
	}
	w := &readyWatch{ready: map[string]bool{}, done: make(chan struct{})}
	for i := range list.Items {
		w.ready[list.Items[i].Name] = fixture.IsReady(&list.Items[i])
	}
	w.min = w.count()
	wctx, cancel := context.WithCancel(ctx)
	watcher, err := client.CoreV1().Pods(ns).Watch(wctx, metav1.ListOptions{LabelSelector: selector, ResourceVersion: list.ResourceVersion})
	if err != nil {
		cancel()
		t.Fatalf("watching pods: %v", err)
	}
	go func() {
		defer close(w.done)
		defer watcher.Stop()
		for ev := range watcher.ResultChan() {
			pod, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			w.mu.Lock()
			if ev.Type == watch.Deleted {
				delete(w.ready, pod.Name)
			} else {
				w.ready[pod.Name] = fixture.IsReady(pod)
			}
			w.min = min(w.min, w.count())
			w.mu.Unlock()
		}
	}()
	return w, func() { cancel(); <-w.done }
}

func (w *readyWatch) count() int {
	n := 0
	for _, r := range w.ready {
		if r {
			n++
		}
	}
	return n
}

func TestBudgetMinAvailableIsRespected(t *testing.T) {
	s, d := newScene(t, drain.DefaultConfig())
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	nodes := s.env.Nodes(ctx, 2, fixture.NodeOptions{})
	s.env.Deployment(ctx, "web", 3, fixture.OnNode(nodes[0].Name))
	web := s.podsOn(t, ctx, nodes[0].Name, "app=web", 3)
	s.env.PDB(ctx, "web", map[string]string{"app": "web"}, fixture.MinAvailable(2))
	w, stopWatch := watchReady(t, ctx, s.client, s.env.Namespace, "app=web")

	rep, err := d.Run(ctx, drain.Request{Node: nodes[0].Name, Kind: "asg-lifecycle", Evict: true})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	s.env.WaitPodsReady(ctx, "app=web", 3)
	stopWatch()
	if diff := cmp.Diff(drain.Report{Node: nodes[0].Name, Evicted: s.keys(web), Done: true}, rep, cmpIgnoreElapsed); diff != "" {
		t.Errorf("report mismatch (-want +got):\n%s", diff)
	}
	if w.min < 2 {
		t.Errorf("Ready replicas fell to %d during the drain, want at least 2", w.min)
	}
}

func TestBudgetThatNeverAllowsStopsAtDeadline(t *testing.T) {
	cfg := drain.DefaultConfig()
	cfg.DeadlineDelete = false // DRAINPIPE_DEADLINE_DELETE=false: budgets hold to the end
	s, d := newScene(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	n := s.env.Node(ctx, fixture.NodeOptions{})
	s.env.Deployment(ctx, "db", 2, fixture.OnNode(n.Name))
	db := s.podsOn(t, ctx, n.Name, "app=db", 2)
	s.env.PDB(ctx, "db", map[string]string{"app": "db"}, fixture.MaxUnavailable(0))

	rep, err := d.Run(ctx, drain.Request{Node: n.Name, Kind: "spot-interruption", Evict: true, Deadline: time.Now().Add(2 * time.Second)})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if diff := cmp.Diff(drain.Report{Node: n.Name, BlockedByPDB: s.keys(db)}, rep, cmpIgnoreElapsed); diff != "" {
		t.Errorf("report mismatch (-want +got):\n%s", diff)
	}
	// The next Run of the same drain (a redelivery) is still blocked since
	// the first Run's refusal: the node's report carries it over, so the
	// DrainBlockedFor metric grows across Runs.
	since := rep.BlockedSince
	if since.IsZero() || since.After(time.Now()) {
		t.Fatalf("BlockedSince = %v, want the first refusal", since)
	}
	rep, err = d.Run(ctx, drain.Request{Node: n.Name, Kind: "spot-interruption", Evict: true, Deadline: time.Now().Add(time.Second)})
	if err != nil {
		t.Fatalf("second Run: %v", err)
	}
	if !rep.BlockedSince.Equal(since) {
		t.Errorf("second Run: BlockedSince = %v, want the first Run's %v", rep.BlockedSince, since)
	}
	for _, p := range s.env.PodsOnNode(ctx, n.Name) {
		if p.DeletionTimestamp != nil {
			t.Errorf("pod %s is terminating: a budget was bypassed", p.Name)
		}
	}
}

func TestWavesEvictCriticalPodsLast(t *testing.T) {
	s, d := newScene(t, drain.DefaultConfig())
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	nodes := s.env.Nodes(ctx, 2, fixture.NodeOptions{})
	n := nodes[0]
	// Ordinary pods linger a second after eviction, so a drain without
	// waves would evict the critical pod while they are still there.
	s.env.Deployment(ctx, "web", 3, fixture.OnNode(n.Name), fixture.GracePeriod(1))
	s.env.Deployment(ctx, "dns", 1, fixture.OnNode(n.Name), fixture.Priority("system-cluster-critical"))
	web := s.podsOn(t, ctx, n.Name, "app=web", 3)
	dns := s.podsOn(t, ctx, n.Name, "app=dns", 1)[0]

	rep, err := d.Run(ctx, drain.Request{Node: n.Name, Kind: "spot-interruption", Evict: true})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !rep.Done {
		t.Fatalf("drain not done: %+v", rep)
	}
	critical := s.events.index(drain.EventEvicted, s.key(dns.Name))
	for _, p := range web {
		if gone := s.events.index(drain.EventGone, s.key(p.Name)); gone < 0 || gone > critical {
			t.Errorf("critical pod evicted (event %d) before ordinary pod %s was gone (event %d)", critical, p.Name, gone)
		}
	}
}

func TestCriticalWaveStartsAtReserve(t *testing.T) {
	cfg := drain.DefaultConfig()
	cfg.CriticalReserve = 2 * time.Second
	s, d := newScene(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	nodes := s.env.Nodes(ctx, 2, fixture.NodeOptions{})
	n := nodes[0]
	// The ordinary pod stays terminating (held by a finalizer): only the
	// reserve before the deadline starts the critical wave.
	held := s.env.Pod(ctx, "held", fixture.BoundTo(n.Name), fixture.Finalizers("drainpipe.test/hold"))
	defer s.env.RemoveFinalizers(ctx, held.Name)
	s.env.Deployment(ctx, "dns", 1, fixture.OnNode(n.Name), fixture.Priority("system-cluster-critical"))
	dns := s.podsOn(t, ctx, n.Name, "app=dns", 1)

	rep, err := d.Run(ctx, drain.Request{Node: n.Name, Kind: "spot-interruption", Evict: true, Deadline: time.Now().Add(4 * time.Second)})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := drain.Report{Node: n.Name, Evicted: append(s.keys(dns), s.key(held.Name)), Terminating: []string{s.key(held.Name)}}
	if diff := cmp.Diff(want, rep, cmpIgnoreElapsed); diff != "" {
		t.Errorf("report mismatch (-want +got):\n%s", diff)
	}
	if s.events.index(drain.EventEvicted, s.keys(dns)[0]) < 0 {
		t.Errorf("critical pod not evicted at the reserve")
	}
}

func TestGraceIsClampedToDeadline(t *testing.T) {
	cfg := drain.DefaultConfig()
	cfg.SafetyMargin = 5 * time.Second
	s, d := newScene(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	n := s.env.Node(ctx, fixture.NodeOptions{})
	// Finalizers hold the evicted pods so their deletion grace can be read.
	hold := fixture.Finalizers("drainpipe.test/hold")
	slow := s.env.Pod(ctx, "slow", fixture.BoundTo(n.Name), fixture.GracePeriod(300), hold)
	quick := s.env.Pod(ctx, "quick", fixture.BoundTo(n.Name), fixture.GracePeriod(10), hold)
	deadline := time.Now().Add(60 * time.Second)

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var evicted int
	s.events.onEvent(func(e drain.Event) {
		if e.Type == drain.EventEvicted {
			if evicted++; evicted == 2 {
				stop()
			}
		}
	})
	if _, err := d.Run(runCtx, drain.Request{Node: n.Name, Kind: "spot-interruption", Evict: true, Deadline: deadline}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	got := map[string]int64{}
	for _, p := range []*corev1.Pod{slow, quick} {
		cur, err := s.client.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil || cur.DeletionGracePeriodSeconds == nil {
			t.Fatalf("pod %s after eviction: %v, deletionGracePeriodSeconds %v", p.Name, err, cur.DeletionGracePeriodSeconds)
		}
		got[p.Name] = *cur.DeletionGracePeriodSeconds
	}
	// An ordinary pod's grace ends before the critical reserve: at most
	// 60 s - 15 s; the seconds the setup took before the eviction may
	// lower it a little, never below what is left.
	if g := got["slow"]; g > 45 || g < 45-int64(time.Since(deadline.Add(-60*time.Second)).Seconds())-1 {
		t.Errorf("slow pod's deletion grace = %d s, want the time left before the critical reserve (≤ 45 s)", g)
	}
	if g := got["quick"]; g != 10 {
		t.Errorf("quick pod's deletion grace = %d s, want its own 10 s", g)
	}
}

func TestResumedDrainKeepsWaveOrder(t *testing.T) {
	s, d := newScene(t, drain.DefaultConfig())
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	nodes := s.env.Nodes(ctx, 2, fixture.NodeOptions{})
	n := nodes[0]
	stuck := s.env.Pod(ctx, "stuck", fixture.BoundTo(n.Name), fixture.Finalizers("drainpipe.test/hold"))
	s.env.Deployment(ctx, "dns", 1, fixture.OnNode(n.Name), fixture.Priority("system-cluster-critical"))
	dns := s.podsOn(t, ctx, n.Name, "app=dns", 1)
	req := drain.Request{Node: n.Name, Kind: "spot-interruption", Evict: true}

	// The first Run is interrupted once the ordinary pod is evicted.
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	s.events.onEvent(func(e drain.Event) {
		if e.Type == drain.EventEvicted {
			stop()
		}
	})
	if _, err := d.Run(runCtx, req); err != nil {
		t.Fatalf("Run: %v", err)
	}
	s.events.onEvent(nil)

	// Resumed while the ordinary pod still terminates, the drain must not
	// start the critical wave: it stops at its budget with dns pending.
	short, cancelShort := context.WithTimeout(ctx, time.Second)
	defer cancelShort()
	rep, err := d.Run(short, req)
	if err != nil {
		t.Fatalf("resumed Run: %v", err)
	}
	want := drain.Report{Node: n.Name, Terminating: []string{s.key(stuck.Name)}, Pending: s.keys(dns)}
	if diff := cmp.Diff(want, rep, cmpIgnoreElapsed); diff != "" {
		t.Errorf("resumed report mismatch (-want +got):\n%s", diff)
	}

	// Once it is gone, the next Run evicts the critical pod and is done.
	s.env.RemoveFinalizers(ctx, stuck.Name)
	rep, err = d.Run(ctx, req)
	if err != nil {
		t.Fatalf("final Run: %v", err)
	}
	if diff := cmp.Diff(drain.Report{Node: n.Name, Evicted: s.keys(dns), Done: true}, rep, cmpIgnoreElapsed); diff != "" {
		t.Errorf("final report mismatch (-want +got):\n%s", diff)
	}
}
