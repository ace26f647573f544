package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The bound's drain evicts a budget's pods in the nodes' order, one queue
// per budget; pods no budget covers, or two do, go at once; pods off the
// interrupted nodes, DaemonSet pods and terminating ones not at all.
func TestBestPlan(t *testing.T) {
	pod := func(name, node, app string) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: name, Labels: map[string]string{"app": app}},
			Spec: corev1.PodSpec{NodeName: node}}
	}
	pdb := func(name, app string) policyv1.PodDisruptionBudget {
		return policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "fleet", Name: name},
			Spec: policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}}
	}
	ds := pod("ds", "n1", "agent")
	ds.OwnerReferences = []metav1.OwnerReference{{Kind: "DaemonSet", Name: "agent"}}
	gone := pod("gone", "n1", "a")
	gone.DeletionTimestamp = &metav1.Time{}
	both := pod("both", "n2", "b")
	both.Labels["extra"] = "x"
	pods := []corev1.Pod{pod("a3", "n3", "a"), pod("a1", "n1", "a"), pod("a2", "n2", "a"), pod("elsewhere", "n9", "a"),
		pod("free", "n2", "none"), ds, gone, both}
	extra := pdb("extra", "")
	extra.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"extra": "x"}}
	free, queues := bestPlan(pods, []policyv1.PodDisruptionBudget{pdb("a", "a"), pdb("b", "b"), extra}, []string{"n1", "n2", "n3"})
	if diff := cmp.Diff([]podRef{{"fleet", "free", "n2"}, {"fleet", "both", "n2"}}, free, cmp.AllowUnexported(podRef{})); diff != "" {
		t.Errorf("free (-want +got):\n%s", diff)
	}
	want := map[string][]podRef{"a": {{"fleet", "a1", "n1"}, {"fleet", "a2", "n2"}, {"fleet", "a3", "n3"}}}
	if diff := cmp.Diff(want, queues, cmp.AllowUnexported(podRef{})); diff != "" {
		t.Errorf("queues (-want +got):\n%s", diff)
	}
}
