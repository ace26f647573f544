package drain_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// stopOn returns a context for a Run that ends when the Run emits an
// event of type typ for pod (or at the test's bound).
func (s *scene) stopOn(ctx context.Context, typ drain.EventType, pod string) (context.Context, context.CancelFunc) {
	runCtx, stop := context.WithTimeout(ctx, 20*time.Second)
	s.events.onEvent(func(e drain.Event) {
		if e.Type == typ && e.Pod == pod {
			stop()
		}
	})
	return runCtx, stop
}

func TestTerminatingPodIsShortenedToTheDeadline(t *testing.T) {
	s, d := newScene(t, drain.DefaultConfig())
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	n := s.env.Node(ctx, fixture.NodeOptions{})
	slow := s.env.Pod(ctx, "slow", fixture.BoundTo(n.Name), fixture.GracePeriod(300))
	// Deleted earlier with its full grace: it would outlive the instance.
	if err := s.client.CoreV1().Pods(slow.Namespace).Delete(ctx, slow.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](300)}); err != nil {
		t.Fatalf("deleting pod: %v", err)
	}
	deadline := time.Now().Add(60 * time.Second)
	runCtx, stop := s.stopOn(ctx, drain.EventEvicted, s.key(slow.Name))
	defer stop()
	if _, err := d.Run(runCtx, drain.Request{Node: n.Name, Kind: "spot-interruption", Evict: true, Deadline: deadline}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	cur, err := s.client.CoreV1().Pods(slow.Namespace).Get(ctx, slow.Name, metav1.GetOptions{})
	if err != nil || cur.DeletionGracePeriodSeconds == nil {
		t.Fatalf("pod after the Run: %v, deletionGracePeriodSeconds %v", err, cur.DeletionGracePeriodSeconds)
	}
	// An ordinary pod's grace ends before the critical reserve: at most
	// 60 s - 15 s.
	if g := *cur.DeletionGracePeriodSeconds; g > 45 {
		t.Errorf("terminating pod's deletion grace = %d s, want it shortened to end before the deadline (≤ 45 s)", g)
	}
	if !cur.DeletionTimestamp.Time.Before(deadline) {
		t.Errorf("terminating pod ends at %v, after the deadline %v", cur.DeletionTimestamp.Time, deadline)
	}
}

func TestLatePodIsEvicted(t *testing.T) {
	s, d := newScene(t, drain.DefaultConfig())
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	n := s.env.Node(ctx, fixture.NodeOptions{})
	hold := "drainpipe.test/hold"
	first := s.env.Pod(ctx, "first", fixture.BoundTo(n.Name), fixture.Finalizers(hold))
	// Once the first pod is evicted, a pod is bound to the node (as a
	// replacement scheduled before the cordon reached the scheduler's
	// cache would be), then the first pod is let go.
	s.events.onEvent(func(e drain.Event) {
		if e.Type != drain.EventEvicted || e.Pod != s.key(first.Name) {
			return
		}
		late := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "late", Namespace: s.env.Namespace},
			Spec: corev1.PodSpec{NodeName: n.Name, TerminationGracePeriodSeconds: ptr.To[int64](0),
				Containers: []corev1.Container{{Name: "app", Image: fixture.Image}}}}
		if _, err := s.client.CoreV1().Pods(s.env.Namespace).Create(ctx, late, metav1.CreateOptions{}); err != nil {
			t.Errorf("creating late pod: %v", err)
		}
		s.env.RemoveFinalizers(ctx, first.Name)
	})
	rep, err := d.Run(ctx, drain.Request{Node: n.Name, Kind: "asg-lifecycle", Evict: true})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := drain.Report{Node: n.Name, Evicted: []string{s.key(first.Name), s.key("late")}, Done: true}
	if diff := cmp.Diff(want, rep, cmpIgnoreElapsed); diff != "" {
		t.Errorf("report mismatch (-want +got):\n%s", diff)
	}
	if left := s.env.PodsOnNode(ctx, n.Name); len(left) != 0 {
		t.Errorf("%d pods left on a node reported drained", len(left))
	}
}

func TestCriticalWaveStartsWhenOrdinaryPodsAreBlocked(t *testing.T) {
	s, d := newScene(t, drain.DefaultConfig())
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	nodes := s.env.Nodes(ctx, 2, fixture.NodeOptions{})
	n := nodes[0]
	s.env.Deployment(ctx, "db", 1, fixture.OnNode(n.Name))
	s.env.Deployment(ctx, "dns", 1, fixture.OnNode(n.Name), fixture.Priority("system-cluster-critical"))
	db := s.podsOn(t, ctx, n.Name, "app=db", 1)
	dns := s.podsOn(t, ctx, n.Name, "app=dns", 1)
	s.env.PDB(ctx, "db", map[string]string{"app": "db"}, fixture.MaxUnavailable(0))

	// No deadline (a lifecycle hook): the blocked ordinary pod must not
	// hold the critical wave back for ever.
	runCtx, stop := s.stopOn(ctx, drain.EventEvicted, s.key(dns[0].Name))
	defer stop()
	rep, err := d.Run(runCtx, drain.Request{Node: n.Name, Kind: "asg-lifecycle", Evict: true})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	// Stopped at the critical pod's eviction: whether it is gone yet or
	// still terminating is a race, and beside the point.
	got := map[string][]string{"evicted": rep.Evicted, "blocked": rep.BlockedByPDB, "pending": rep.Pending}
	want := map[string][]string{"evicted": s.keys(dns), "blocked": s.keys(db), "pending": nil}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("report mismatch (-want +got):\n%s", diff)
	}
}

func TestBlockedPodIsDeletedAtTheDeadline(t *testing.T) {
	cfg := drain.DefaultConfig()
	cfg.SafetyMargin = 2 * time.Second
	s, d := newScene(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	n := s.env.Node(ctx, fixture.NodeOptions{})
	s.env.Deployment(ctx, "db", 1, fixture.OnNode(n.Name), fixture.GracePeriod(30))
	db := s.podsOn(t, ctx, n.Name, "app=db", 1)
	s.env.PDB(ctx, "db", map[string]string{"app": "db"}, fixture.MaxUnavailable(0))

	// Deleted 2 margins (4 s) before the deadline, with the grace left.
	deadline := time.Now().Add(10 * time.Second)
	rep, err := d.Run(ctx, drain.Request{Node: n.Name, Kind: "spot-interruption", Evict: true, Deadline: deadline})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if diff := cmp.Diff(s.keys(db), rep.DeletedAtDeadline); diff != "" {
		t.Errorf("deleted at the deadline mismatch (-want +got):\n%s\nreport: %+v", diff, rep)
	}
	if len(rep.BlockedByPDB) != 0 || len(rep.Evicted) != 0 {
		t.Errorf("report = %+v, want the blocked pod deleted, not evicted nor still blocked", rep)
	}
	if s.events.index(drain.EventDeleted, s.key(db[0].Name)) < 0 {
		t.Errorf("no %q event for %s", drain.EventDeleted, db[0].Name)
	}
	cur, err := s.client.CoreV1().Pods(db[0].Namespace).Get(ctx, db[0].Name, metav1.GetOptions{})
	if err == nil && (cur.DeletionTimestamp == nil || cur.DeletionTimestamp.After(deadline)) {
		t.Errorf("pod deletion ends at %v, want before the deadline %v", cur.DeletionTimestamp, deadline)
	}
}

func TestStuckPodLetsTheDrainFinish(t *testing.T) {
	cfg := drain.DefaultConfig()
	cfg.StuckAfter = time.Second
	s, d := newScene(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	n := s.env.Node(ctx, fixture.NodeOptions{})
	stuck := s.env.Pod(ctx, "stuck", fixture.BoundTo(n.Name), fixture.GracePeriod(1), fixture.Finalizers("drainpipe.test/hold"))
	defer s.env.RemoveFinalizers(ctx, stuck.Name)

	rep, err := d.Run(ctx, drain.Request{Node: n.Name, Kind: "asg-lifecycle", Evict: true})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := drain.Report{Node: n.Name, Evicted: []string{s.key(stuck.Name)}, Stuck: []string{s.key(stuck.Name)}, Done: true}
	if diff := cmp.Diff(want, rep, cmpIgnoreElapsed); diff != "" {
		t.Errorf("report mismatch (-want +got):\n%s", diff)
	}
}

// TestGraceCapWithoutDeadline: with a grace cap (NTH's
// podTerminationGracePeriod), a pod evicted with no deadline (a lifecycle
// hook's drain) is given the cap, not its own five minutes.
func TestGraceCapWithoutDeadline(t *testing.T) {
	cfg := drain.DefaultConfig()
	cfg.GraceCap = 30 * time.Second
	s, d := newScene(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	n := s.env.Node(ctx, fixture.NodeOptions{})
	slow := s.env.Pod(ctx, "slow", fixture.BoundTo(n.Name), fixture.GracePeriod(300))
	runCtx, stop := s.stopOn(ctx, drain.EventEvicted, s.key(slow.Name))
	defer stop()
	if _, err := d.Run(runCtx, drain.Request{Node: n.Name, Kind: "asg-lifecycle", Evict: true}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	cur, err := s.client.CoreV1().Pods(slow.Namespace).Get(ctx, slow.Name, metav1.GetOptions{})
	if err != nil || cur.DeletionGracePeriodSeconds == nil {
		t.Fatalf("pod after the Run: %v, deletionGracePeriodSeconds %v", err, cur.DeletionGracePeriodSeconds)
	}
	if g := *cur.DeletionGracePeriodSeconds; g != 30 {
		t.Errorf("evicted pod's deletion grace = %d s, want the cap, 30 s", g)
	}
}
