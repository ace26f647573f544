package deploy_test

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// TestAdmissionPolicyRefusesWritesOutsideTheJob: under the policies, group
// drainpipe may not reset or forge the managedFields of a node or a pod
// (who set which field), and writes a pod's warning once per interruption:
// a rewrite for the same kind and event id is refused, one for another
// interruption admitted. An administrator is not bound.
func TestAdmissionPolicyRefusesWritesOutsideTheJob(t *testing.T) {
	ctx, env, client := rbacScene(t)
	applyPolicy(t, ctx, env.Client)
	node := env.Nodes(ctx, 1, fixture.NodeOptions{})[0]
	ns := env.Namespace
	pod := env.Pod(ctx, "target", fixture.OnNode(node.Name))
	awaitRefusal(ctx, t, podPolicy,
		func() error { return patchPod(ctx, t, client, ns, pod.Name, labelPatch("team", "x")) },
		func() error { return patchPod(ctx, t, env.Client, ns, pod.Name, labelPatch("team", nil)) })
	awaitRefusal(ctx, t, nodePolicy,
		func() error { return patchNode(ctx, t, client, node.Name, labelPatch("team", "x")) },
		func() error { return patchNode(ctx, t, env.Client, node.Name, labelPatch("team", nil)) })

	reset := map[string]any{"metadata": map[string]any{"managedFields": []any{map[string]any{}}}}
	forged := func(managed []metav1.ManagedFieldsEntry) map[string]any {
		managed = append(managed, metav1.ManagedFieldsEntry{Manager: "someone-else", Operation: metav1.ManagedFieldsOperationUpdate,
			APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{}}}`)}})
		return map[string]any{"metadata": map[string]any{"managedFields": managed}}
	}
	refused := func(what, policy string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), policy) || !strings.Contains(err.Error(), "managedFields") {
			t.Errorf("%s as group drainpipe: %v, want refused by %s", what, err, policy)
		}
	}
	refused("node managedFields reset", nodePolicy, patchNode(ctx, t, client, node.Name, reset))
	refused("pod managedFields reset", podPolicy, patchPod(ctx, t, client, ns, pod.Name, reset))
	n, err := env.Client.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	refused("forged node managedFields entry", nodePolicy, patchNode(ctx, t, client, node.Name, forged(n.ManagedFields)))
	p, err := env.Client.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	refused("forged pod managedFields entry", podPolicy, patchPod(ctx, t, client, ns, pod.Name, forged(p.ManagedFields)))

	warn := func(c context.Context, value string) error {
		return patchPod(c, t, client, ns, pod.Name, map[string]any{"metadata": map[string]any{
			"uid": pod.UID, "annotations": map[string]string{drain.AnnotationInterruption: value}}})
	}
	first := `{"kind":"spot-interruption","deadline":"2030-01-01T00:00:00Z","eventId":"e-1"}`
	for _, w := range []struct {
		name, value string
		allowed     bool
	}{
		{"first warning", first, true},
		{"the same warning again (no change)", first, true},
		{"the same interruption, another value", `{"kind":"spot-interruption","deadline":"2030-01-01T00:00:01Z","eventId":"e-1"}`, false},
		{"the same interruption, padded", `{"kind":"spot-interruption","eventId":"e-1","deadline":"` + strings.Repeat("x", 1500) + `"}`, false},
		{"another interruption", `{"kind":"spot-interruption","deadline":"2030-01-01T00:00:00Z","eventId":"e-2"}`, true},
	} {
		err := warn(ctx, w.value)
		switch {
		case w.allowed && err != nil:
			t.Errorf("%s as group drainpipe: %v, want admitted", w.name, err)
		case !w.allowed && (err == nil || !strings.Contains(err.Error(), podPolicy)):
			t.Errorf("%s as group drainpipe: %v, want refused by %s", w.name, err, podPolicy)
		}
	}

	if err := patchNode(ctx, t, env.Client, node.Name, reset); err != nil {
		t.Errorf("resetting a node's managedFields as an administrator: %v", err)
	}
}
