package drain_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// A karpenter.sh/do-not-disrupt pod on a Spot node outlives the others and
// is deleted at the deadline less its grace (and the margin), not before,
// so its grace ends before the instance does.
func TestDoNotDisruptPodIsDeletedAtTheLastMoment(t *testing.T) {
	cfg := drain.DefaultConfig()
	cfg.SafetyMargin = 2 * time.Second
	s, d := newScene(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	n := s.env.Node(ctx, fixture.NodeOptions{})
	keep := s.env.Pod(ctx, "keep", fixture.BoundTo(n.Name), fixture.GracePeriod(3),
		fixture.Annotations(map[string]string{drain.AnnotationDoNotDisrupt: "true"}))
	s.env.Pod(ctx, "plain", fixture.BoundTo(n.Name))
	deadline := time.Now().Add(12 * time.Second)
	notBefore := deadline.Add(-3*time.Second - cfg.SafetyMargin)
	runCtx, stop := s.stopOn(ctx, drain.EventDeleted, s.key(keep.Name))
	defer stop()
	if _, err := d.Run(runCtx, drain.Request{Node: n.Name, Kind: "spot-interruption", Evict: true, Deadline: deadline}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	del, ok := s.events.first(drain.EventDeleted, s.key(keep.Name))
	if !ok || del.Detail != drain.ProtectedReason {
		t.Fatalf("protected pod's deletion: %+v, %v; want it deleted as protected", del, ok)
	}
	if del.Time.Before(notBefore.Truncate(time.Second)) {
		t.Errorf("protected pod deleted at %v, before deadline - grace - margin = %v", del.Time, notBefore)
	}
	if p, k := s.events.index(drain.EventEvicted, s.key("plain")), s.events.index(drain.EventDeleted, s.key(keep.Name)); p < 0 || p > k {
		t.Errorf("plain pod evicted at %d, protected pod deleted at %d: want the plain one first", p, k)
	}
	cur, err := s.client.CoreV1().Pods(keep.Namespace).Get(ctx, keep.Name, metav1.GetOptions{})
	if err == nil && cur.DeletionTimestamp != nil && cur.DeletionTimestamp.Time.After(deadline) {
		t.Errorf("protected pod ends at %v, after the deadline %v", cur.DeletionTimestamp.Time, deadline)
	}
}
