package deploy_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// podPolicy is the name the pod policy's refusals carry.
const podPolicy = "drainpipe-pod-changes"

// patchPod sends a JSON merge patch of pod as c.
func patchPod(ctx context.Context, t *testing.T, c kubernetes.Interface, ns, pod string, patch any) error {
	t.Helper()
	b, err := json.Marshal(patch)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.CoreV1().Pods(ns).Patch(ctx, pod, types.MergePatchType, b, metav1.PatchOptions{})
	return err
}

// awaitRefusal polls write until it is refused by policy: bindings take
// effect asynchronously. It reports, without stopping the test, a policy
// that never refuses, so the subtests still say what got through.
func awaitRefusal(ctx context.Context, t *testing.T, policy string, write, undo func() error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	for {
		err := write()
		if err != nil && strings.Contains(err.Error(), policy) {
			return
		}
		if err == nil && undo != nil { // admitted before the policy was active
			_ = undo()
		}
		select {
		case <-ctx.Done():
			t.Errorf("policy %s never refused the probe; last answer: %v", policy, err)
			return
		case <-time.After(100 * time.Millisecond): // polling a condition, bounded by ctx
		}
	}
}

// TestAdmissionPolicyLimitsPodChanges: under the policy, group drainpipe
// may write its interruption warning on a pod, evict and delete pods, and
// change nothing else on a pod (pods patch covers every field); an
// administrator is not affected.
func TestAdmissionPolicyLimitsPodChanges(t *testing.T) {
	ctx, env, client := rbacScene(t)
	applyPolicy(t, ctx, env.Client)
	nodes := env.Nodes(ctx, 1, fixture.NodeOptions{})
	ns := env.Namespace
	target := env.Pod(ctx, "target", fixture.OnNode(nodes[0].Name), fixture.Annotations(map[string]string{drain.AnnotationNotice: "true"}))
	awaitRefusal(ctx, t, podPolicy,
		func() error { return patchPod(ctx, t, client, ns, target.Name, labelPatch("team", "x")) },
		func() error { return patchPod(ctx, t, env.Client, ns, target.Name, labelPatch("team", nil)) })

	withToleration := append(append([]corev1.Toleration{}, target.Spec.Tolerations...),
		corev1.Toleration{Key: "example.com/anything", Operator: corev1.TolerationOpExists})
	for _, c := range []struct {
		name  string
		patch any
		kind  types.PatchType
	}{
		{"image swap", `{"spec":{"containers":[{"name":"app","image":"evil.example.com/pause:latest"}]}}`, types.StrategicMergePatchType},
		{"label change", labelPatch("app", "other"), types.MergePatchType},
		{"new label", labelPatch("team", "x"), types.MergePatchType},
		{"toleration", map[string]any{"spec": map[string]any{"tolerations": withToleration}}, types.MergePatchType},
		{"activeDeadlineSeconds", map[string]any{"spec": map[string]any{"activeDeadlineSeconds": 1}}, types.MergePatchType},
		{"foreign annotation", annotationPatch("example.com/owner", "me"), types.MergePatchType},
		{"workload's notice opt-in", annotationPatch(drain.AnnotationNotice, nil), types.MergePatchType},
		{"oversized drainpipe annotation", annotationPatch(drain.AnnotationInterruption, strings.Repeat("x", 4<<10)), types.MergePatchType},
		{"another drainpipe.dev annotation", annotationPatch("drainpipe.dev/owner", "me"), types.MergePatchType},
	} {
		t.Run("refused "+c.name, func(t *testing.T) {
			body, ok := c.patch.(string)
			if !ok {
				b, err := json.Marshal(c.patch)
				if err != nil {
					t.Fatal(err)
				}
				body = string(b)
			}
			_, err := client.CoreV1().Pods(ns).Patch(ctx, target.Name, c.kind, []byte(body), metav1.PatchOptions{})
			if err == nil || !strings.Contains(err.Error(), podPolicy) {
				t.Errorf("%s as group drainpipe: %v, want refused by %s", c.name, err, podPolicy)
			}
		})
	}

	t.Run("allowed interruption warning", func(t *testing.T) {
		// As the drain writes it: the pod's UID in the patch, the warning.
		in := `{"kind":"spot-interruption","deadline":"2030-01-01T00:00:00Z","eventId":"vap-pods","evictAt":"2030-01-01T00:00:00Z"}`
		patch := map[string]any{"metadata": map[string]any{"uid": target.UID, "annotations": map[string]string{drain.AnnotationInterruption: in}}}
		if err := patchPod(ctx, t, client, ns, target.Name, patch); err != nil {
			t.Fatalf("warning a pod as group drainpipe: %v", err)
		}
		got, err := env.Client.CoreV1().Pods(ns).Get(ctx, target.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Annotations[drain.AnnotationInterruption] != in || got.Spec.Containers[0].Image != target.Spec.Containers[0].Image ||
			got.Labels["app"] != "target" || got.Annotations[drain.AnnotationNotice] != "true" {
			t.Errorf("pod after the warning: image %s, labels %v, annotations %v; want only the warning added",
				got.Spec.Containers[0].Image, got.Labels, got.Annotations)
		}
	})
	t.Run("allowed eviction", func(t *testing.T) {
		p := env.Pod(ctx, "evictee", fixture.OnNode(nodes[0].Name))
		if err := client.PolicyV1().Evictions(ns).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: ns}}); err != nil {
			t.Errorf("evicting as group drainpipe: %v", err)
		}
	})
	t.Run("allowed delete", func(t *testing.T) {
		p := env.Pod(ctx, "deletee", fixture.OnNode(nodes[0].Name))
		if err := client.CoreV1().Pods(ns).Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("deleting as group drainpipe: %v", err)
		}
	})
	t.Run("administrator not bound", func(t *testing.T) {
		if err := patchPod(ctx, t, env.Client, ns, target.Name, labelPatch("team", "admin")); err != nil {
			t.Errorf("labelling a pod as an administrator: %v", err)
		}
	})
}

func labelPatch(k string, v any) map[string]any {
	return map[string]any{"metadata": map[string]any{"labels": map[string]any{k: v}}}
}

func annotationPatch(k string, v any) map[string]any {
	return map[string]any{"metadata": map[string]any{"annotations": map[string]any{k: v}}}
}
