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

// drainAfterCut drains a node holding pods "cut" and "other" under one
// budget of minAvailable, once cutGrant has recorded cut's eviction as
// granted age ago. Only a grant may delete: DeadlineDelete is off.
func drainAfterCut(t *testing.T, ctx context.Context, minAvailable int, age time.Duration) (*scene, drain.Report) {
	t.Helper()
	cfg := drain.DefaultConfig()
	cfg.DeadlineDelete = false
	s, d := newScene(t, cfg)
	n := s.env.Node(ctx, fixture.NodeOptions{})
	app := map[string]string{"app": "web"}
	cut := s.env.Pod(ctx, "cut", fixture.BoundTo(n.Name), fixture.Labels(app))
	s.env.Pod(ctx, "other", fixture.BoundTo(n.Name), fixture.Labels(app))
	s.env.PDB(ctx, "web", app, fixture.MinAvailable(minAvailable))
	s.cutGrant(t, ctx, "web", cut, time.Now().Add(-age))

	rep, err := d.Run(ctx, drain.Request{Node: n.Name, Kind: "spot-interruption", Evict: true, Deadline: time.Now().Add(3 * time.Second)})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return s, rep
}

// terminating returns the names of the Env's terminating pods.
func (s *scene) terminating(ctx context.Context) []string {
	var out []string
	for _, p := range s.env.Pods(ctx, "") {
		if p.DeletionTimestamp != nil {
			out = append(out, p.Name)
		}
	}
	return out
}

func TestGrantedEvictionCutShortIsFinished(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	// The budget allowed one disruption, granted to cut.
	s, rep := drainAfterCut(t, ctx, 1, 0)
	want := drain.Report{Node: rep.Node, FinishedGrants: []string{s.key("cut")}, BlockedByPDB: []string{s.key("other")}}
	if diff := cmp.Diff(want, rep, cmpIgnoreElapsed); diff != "" {
		t.Errorf("report mismatch (-want +got):\n%s", diff)
	}
	if e, ok := s.events.first(drain.EventEvicted, s.key("cut")); !ok || e.Detail != drain.GrantFinishedReason {
		t.Errorf("evicted event for cut: %+v, want detail %q", e, drain.GrantFinishedReason)
	}
	if got := s.terminating(ctx); len(got) > 0 {
		t.Errorf("pods %v terminating: a budget was bypassed", got)
	}
	if _, err := s.client.CoreV1().Pods(s.env.Namespace).Get(ctx, "cut", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("pod cut after the Run: %v, want it gone", err)
	}
}

func TestOldGrantIsNotFinished(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	// minAvailable 2 keeps the budget at zero even once the disruption
	// controller forgets the grant: only the grant's age is on trial.
	s, rep := drainAfterCut(t, ctx, 2, 100*time.Second)
	want := drain.Report{Node: rep.Node, BlockedByPDB: []string{s.key("cut"), s.key("other")}}
	if diff := cmp.Diff(want, rep, cmpIgnoreElapsed); diff != "" {
		t.Errorf("report mismatch (-want +got):\n%s", diff)
	}
	if got := s.terminating(ctx); len(got) > 0 {
		t.Errorf("pods %v terminating: a budget was bypassed", got)
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
