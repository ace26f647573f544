package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/kubewire"
	"github.com/drainpipe/drainpipe/test/fleet"
	"github.com/drainpipe/drainpipe/test/sandbox"
)

// TestCordonCommitsTakeTheFirstWriteThatCordons checks which audit event
// times a node's cordon: the first successful write after the wave's
// start whose answer shows the node unschedulable; refused writes,
// status writes, writes that leave it schedulable, other nodes and what
// came before the wave do not count.
func TestCordonCommitsTakeTheFirstWriteThatCordons(t *testing.T) {
	start := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	at := func(ms int) string { return start.Add(time.Duration(ms) * time.Millisecond).Format(time.RFC3339Nano) }
	ev := func(ms int, verb, node, sub string, code int, unsched bool) string {
		return fmt.Sprintf(`{"kind":"Event","stage":"ResponseComplete","verb":%q,"objectRef":{"resource":"nodes","subresource":%q,"name":%q},`+
			`"responseStatus":{"code":%d},"responseObject":{"kind":"Node","spec":{"unschedulable":%t}},"stageTimestamp":%q}`,
			verb, sub, node, code, unsched, at(ms))
	}
	log := strings.Join([]string{
		ev(-50, "patch", "a", "", 200, true), // before the wave
		ev(10, "patch", "a", "status", 200, true),
		ev(20, "patch", "a", "", 422, false), // a tested patch refused
		ev(30, "update", "a", "", 200, false),
		ev(310, "patch", "a", "", 200, true), // the cordon
		ev(400, "patch", "a", "", 200, true),
		ev(250, "update", "b", "", 200, true),
		ev(100, "patch", "other", "", 200, true),
	}, "\n") + "\n"
	path := filepath.Join(t.TempDir(), "audit.log")
	if err := os.WriteFile(path, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := cordonCommits(path, start, map[string]bool{"a": true, "b": true, "c": true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]time.Duration{"a": 310 * time.Millisecond, "b": 250 * time.Millisecond}
	if len(got) != len(want) || got["a"] != want["a"] || got["b"] != want["b"] {
		t.Errorf("commits = %v, want %v", got, want)
	}
}

// TestAuditTimesACordonOnTheAPIServer runs the policy on a real API
// server: a protobuf client's cordon (as Drainpipe's and the floor's
// clients speak) is logged with its answer and timed; a status write and
// a write to another node are not taken for it.
func TestAuditTimesACordonOnTheAPIServer(t *testing.T) {
	flags, log, err := auditFlags(t.TempDir(), false)
	if err != nil {
		t.Fatal(err)
	}
	sb := sandbox.StartForTest(t, sandbox.Options{APIServerFlags: flags})
	rc := sb.RESTConfig()
	kubewire.Tune(rc, -1, 0)
	c, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	for _, name := range []string{"audited", "other"} {
		if _, err := c.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	nodes := c.CoreV1().Nodes()
	if _, err := nodes.Patch(ctx, "audited", types.MergePatchType, []byte(`{"status":{"phase":"Running"}}`), metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
	if _, err := nodes.Patch(ctx, "other", types.MergePatchType, []byte(`{"spec":{"unschedulable":true}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := nodes.Patch(ctx, "audited", types.MergePatchType, []byte(`{"spec":{"unschedulable":true}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	answered := time.Since(start)
	got, err := cordonCommits(log, start, map[string]bool{"audited": true})
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := got["audited"]; len(got) != 1 || !ok || d <= 0 || d > answered {
		t.Errorf("commits = %v, want the cordon of audited only, within the %v its requests took", got, answered)
	}
}

// TestAuditCountsDeletesPastABudget runs the policy on a real API server:
// a pod the handler's identity deletes counts against its node; one it
// evicts, one the admin deletes (a reclaim, a kubelet) and a pod off the
// target nodes do not.
func TestAuditCountsDeletesPastABudget(t *testing.T) {
	admin, dp, log := auditedFleet(t, false)
	ctx := t.Context()
	const ns = "fleet"
	names := []string{"deleted", "evicted", "reclaimed", "elsewhere"}
	for _, name := range names {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app"}}}}
		if _, err := admin.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	zero := int64(0)
	pods := dp.CoreV1().Pods(ns)
	if err := pods.Delete(ctx, "deleted", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	if err := pods.EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "evicted", Namespace: ns}}); err != nil {
		t.Fatal(err)
	}
	if err := admin.CoreV1().Pods(ns).Delete(ctx, "reclaimed", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	if err := pods.Delete(ctx, "elsewhere", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	podNode := map[string]string{"deleted": "n1", "evicted": "n1", "reclaimed": "n2"}
	got, err := deletedPastBudget(log, start, ns, podNode)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got["n1"] != 1 {
		t.Errorf("deleted past a budget = %v, want n1:1 (the handler's delete only)", got)
	}
}

// auditedFleet starts a sandbox under the audit policy (all: requests
// logged too), applies Drainpipe's RBAC and creates namespace fleet; it
// returns the admin's client, one as Drainpipe and the log's path.
func auditedFleet(t *testing.T, all bool) (admin, dp kubernetes.Interface, log string) {
	t.Helper()
	flags, log, err := auditFlags(t.TempDir(), all)
	if err != nil {
		t.Fatal(err)
	}
	sb := sandbox.StartForTest(t, sandbox.Options{APIServerFlags: flags})
	if admin, err = kubernetes.NewForConfig(sb.RESTConfig()); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := fleet.ApplyRBAC(ctx, admin, "../../../deploy/rbac.yaml"); err != nil {
		t.Fatal(err)
	}
	if dp, err = kubernetes.NewForConfig(fleet.DrainpipeUser.Config(sb.RESTConfig())); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "fleet"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return admin, dp, log
}
