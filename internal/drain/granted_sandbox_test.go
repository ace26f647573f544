package drain_test

// Evictions a budget granted but whose deletion a cut connection stopped.

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// cutGrant leaves pdb as the Eviction API does when the connection is cut
// between its two steps: pod's disruption recorded at "at" and counted,
// no disruption left, the pod not deleted. It checks that an eviction of
// pod is then refused by the budget.
func (s *scene) cutGrant(t *testing.T, ctx context.Context, pdb string, pod *corev1.Pod, at time.Time) {
	t.Helper()
	budgets := s.client.PolicyV1().PodDisruptionBudgets(s.env.Namespace)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		b, err := budgets.Get(ctx, pdb, metav1.GetOptions{})
		if err != nil {
			return err
		}
		b.Status.DisruptedPods = map[string]metav1.Time{pod.Name: metav1.NewTime(at)}
		b.Status.DisruptionsAllowed = 0
		_, err = budgets.UpdateStatus(ctx, b, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("recording the grant in pdb %s: %v", pdb, err)
	}
	// A dry run: were the budget to allow it, the pod would stay.
	ev := &policyv1.Eviction{
		ObjectMeta:    metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name},
		DeleteOptions: &metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}},
	}
	if err := s.client.CoreV1().Pods(pod.Namespace).EvictV1(ctx, ev); !apierrors.IsTooManyRequests(err) {
		t.Fatalf("eviction of %s with its grant recorded: %v, want 429 from the budget", pod.Name, err)
	}
}

func TestGrantedEvictionCutShortIsFinished(t *testing.T) {
	cfg := drain.DefaultConfig()
	cfg.DeadlineDelete = false // only a grant may delete
	s, d := newScene(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	n := s.env.Node(ctx, fixture.NodeOptions{})
	app := fixture.Labels(map[string]string{"app": "web"})
	cut := s.env.Pod(ctx, "cut", fixture.BoundTo(n.Name), app)
	other := s.env.Pod(ctx, "other", fixture.BoundTo(n.Name), app)
	s.env.PDB(ctx, "web", map[string]string{"app": "web"}, fixture.MinAvailable(1))
	s.cutGrant(t, ctx, "web", cut, time.Now())

	rep, err := d.Run(ctx, drain.Request{Node: n.Name, Kind: "spot-interruption", Evict: true, Deadline: time.Now().Add(3 * time.Second)})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := drain.Report{Node: n.Name, FinishedGrants: []string{s.key(cut.Name)}, BlockedByPDB: []string{s.key(other.Name)}}
	if diff := cmp.Diff(want, rep, cmpIgnoreElapsed); diff != "" {
		t.Errorf("report mismatch (-want +got):\n%s", diff)
	}
	if e, ok := s.events.first(drain.EventEvicted, s.key(cut.Name)); !ok || e.Detail != drain.GrantFinishedReason {
		t.Errorf("evicted event for %s: %+v, want detail %q", cut.Name, e, drain.GrantFinishedReason)
	}
	for _, p := range s.env.PodsOnNode(ctx, n.Name) {
		if p.Name == other.Name && p.DeletionTimestamp != nil {
			t.Errorf("pod %s is terminating: a budget was bypassed", p.Name)
		}
	}
	s.env.WaitPodGone(ctx, cut)
}

func TestOldGrantIsNotFinished(t *testing.T) {
	cfg := drain.DefaultConfig()
	cfg.DeadlineDelete = false
	s, d := newScene(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	n := s.env.Node(ctx, fixture.NodeOptions{})
	app := fixture.Labels(map[string]string{"app": "db"})
	old := s.env.Pod(ctx, "old", fixture.BoundTo(n.Name), app)
	other := s.env.Pod(ctx, "other", fixture.BoundTo(n.Name), app)
	// minAvailable 2 keeps the budget at zero even once the disruption
	// controller forgets the grant: only the grant's age is on trial.
	s.env.PDB(ctx, "db", map[string]string{"app": "db"}, fixture.MinAvailable(2))
	s.cutGrant(t, ctx, "db", old, time.Now().Add(-100*time.Second))

	rep, err := d.Run(ctx, drain.Request{Node: n.Name, Kind: "spot-interruption", Evict: true, Deadline: time.Now().Add(3 * time.Second)})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := drain.Report{Node: n.Name, BlockedByPDB: []string{s.key(old.Name), s.key(other.Name)}}
	if diff := cmp.Diff(want, rep, cmpIgnoreElapsed); diff != "" {
		t.Errorf("report mismatch (-want +got):\n%s", diff)
	}
	for _, p := range s.env.PodsOnNode(ctx, n.Name) {
		if p.DeletionTimestamp != nil {
			t.Errorf("pod %s is terminating: a budget was bypassed", p.Name)
		}
	}
}

// first returns the first event of type typ for pod.
func (l *eventLog) first(typ drain.EventType, pod string) (drain.Event, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.events {
		if e.Type == typ && e.Pod == pod {
			return e, true
		}
	}
	return drain.Event{}, false
}
