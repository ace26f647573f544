package drain

import (
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// A budget that refuses an eviction it has already granted (the deletion
// was cut short) has the pod deleted at once, with no retry: the event
// says the grant was finished.
func TestGrantCutShortIsFinishedByADelete(t *testing.T) {
	t.Parallel()
	b := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"},
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
		Status:     policyv1.PodDisruptionBudgetStatus{DisruptedPods: map[string]metav1.Time{"p": {Time: evictNow}}},
	}
	s := newEvictScene(t, []runtime.Object{b}, budgetRefused())
	s.r.evict(s.t)
	if got := s.count("create", "pods", "eviction"); got != 1 {
		t.Errorf("%d evictions sent, want 1", got)
	}
	if got := s.count("delete", "pods", ""); got != 1 {
		t.Errorf("%d deletes sent, want 1", got)
	}
	want := Event{Time: evictNow, Type: EventEvicted, Node: "n1", Pod: "ns/p", PodUID: "uid-p", Detail: GrantFinishedReason, GraceSeconds: -1}
	if len(s.events) != 1 || s.events[0] != want {
		t.Errorf("events %+v, want %+v", s.events, want)
	}
	if s.t.state != stateGranted {
		t.Errorf("state %d, want granted (%d)", s.t.state, stateGranted)
	}
}
