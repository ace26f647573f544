package deploy_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// applyPolicy creates the ValidatingAdmissionPolicy and its binding in
// admission-policy.yaml.
func applyPolicy(t *testing.T, ctx context.Context, admin kubernetes.Interface) {
	t.Helper()
	var policy admissionv1.ValidatingAdmissionPolicy
	var binding admissionv1.ValidatingAdmissionPolicyBinding
	decodeManifest(t, "admission-policy.yaml", &policy, &binding)
	if _, err := admin.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, &policy, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating policy: %v", err)
	}
	if _, err := admin.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, &binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating binding: %v", err)
	}
}

// TestAdmissionPolicyLimitsNodeChanges: under the optional policy, group
// drainpipe still cordons, taints, labels, annotates and drains a node,
// while a patch of any other node field is refused; an administrator is
// not affected.
func TestAdmissionPolicyLimitsNodeChanges(t *testing.T) {
	ctx, env, client := rbacScene(t)
	applyPolicy(t, ctx, env.Client)
	nodes := env.Nodes(ctx, 2, fixture.NodeOptions{})
	env.Deployment(ctx, "web", 2, fixture.OnNode(nodes[0].Name))
	env.WaitDeploymentReady(ctx, "web")

	merge := func(c kubernetes.Interface, node string, patch any) error {
		b, err := json.Marshal(patch)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, b, metav1.PatchOptions{})
		return err
	}
	foreignLabel := map[string]any{"metadata": map[string]any{"labels": map[string]string{"team": "x"}}}
	// RBAC and the policy take effect asynchronously: wait until the
	// group may patch nodes and the policy refuses a foreign label.
	for {
		err := merge(client, nodes[1].Name, foreignLabel)
		if err != nil && strings.Contains(err.Error(), "drainpipe-node-changes") {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the policy never refused a foreign label; last answer: %v", err)
		}
		if err == nil { // admitted before the policy was active: undo
			_ = merge(env.Client, nodes[1].Name, map[string]any{"metadata": map[string]any{"labels": map[string]any{"team": nil}}})
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond): // polling a condition, bounded by ctx
		}
	}

	rep, err := drain.New(client, drain.DefaultConfig(), nil).Run(ctx, drain.Request{
		Node: nodes[0].Name, Kind: "spot-interruption", EventID: "vap-test", Evict: true,
		Deadline: time.Now().Add(time.Hour),
	})
	if err != nil {
		t.Fatalf("drain under the policy: %v", err)
	}
	if !rep.Done || len(rep.Evicted) != 2 {
		t.Errorf("report %+v: want done with the 2 web pods evicted", rep)
	}
	drained, err := env.Client.CoreV1().Nodes().Get(ctx, nodes[0].Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !drained.Spec.Unschedulable || drained.Labels[drain.ExcludeFromLBLabel] != "true" || drained.Annotations[drain.AnnotationEventID] != "vap-test" {
		t.Errorf("drained node: unschedulable %v, labels %v, annotations %v; want cordoned, labelled, annotated",
			drained.Spec.Unschedulable, drained.Labels, drained.Annotations)
	}
	// Undoing its own changes (return to service) is allowed too.
	others := []corev1.Taint{}
	for _, tn := range drained.Spec.Taints {
		if tn.Key != drain.TaintKey {
			others = append(others, tn)
		}
	}
	if err := merge(client, nodes[0].Name, map[string]any{
		"spec":     map[string]any{"unschedulable": false, "taints": others},
		"metadata": map[string]any{"labels": map[string]any{drain.ExcludeFromLBLabel: nil}, "annotations": map[string]any{drain.AnnotationEventID: nil}},
	}); err != nil {
		t.Errorf("uncordoning as group drainpipe: %v", err)
	}

	target := nodes[1]
	for what, patch := range map[string]any{
		"another label":        foreignLabel,
		"remove a label":       map[string]any{"metadata": map[string]any{"labels": map[string]any{corev1.LabelHostname: nil}}},
		"another annotation":   map[string]any{"metadata": map[string]any{"annotations": map[string]string{"example.com/owner": "me"}}},
		"another taint":        map[string]any{"spec": map[string]any{"taints": []corev1.Taint{{Key: "example.com/x", Effect: corev1.TaintEffectNoSchedule}}}},
		"pod CIDR":             map[string]any{"spec": map[string]any{"podCIDR": "10.99.0.0/24", "podCIDRs": []string{"10.99.0.0/24"}}},
		"finalizer":            map[string]any{"metadata": map[string]any{"finalizers": []string{"example.com/keep"}}},
		"drainpipe-like label": map[string]any{"metadata": map[string]any{"labels": map[string]string{"drainpipe.dev/x": "y"}}},
	} {
		err := merge(client, target.Name, patch)
		// A pod CIDR already set is immutable: validation may refuse it
		// before the policy is asked.
		if err == nil || (!strings.Contains(err.Error(), "drainpipe-node-changes") && what != "pod CIDR") {
			t.Errorf("%s as group drainpipe: %v, want refused by the policy", what, err)
		}
	}
	// The policy binds group drainpipe only.
	if err := merge(env.Client, target.Name, map[string]any{"metadata": map[string]any{"annotations": map[string]string{"example.com/owner": "admin"}}}); err != nil {
		t.Errorf("annotating as an administrator: %v", err)
	}
}
