package deploy_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// applyPolicy creates the ValidatingAdmissionPolicies and bindings of
// admission-policy.yaml (documents in pairs: a policy, then its binding).
func applyPolicy(t *testing.T, ctx context.Context, admin kubernetes.Interface) {
	t.Helper()
	for _, p := range policyManifest(t) {
		if _, err := admin.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, &p.policy, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("creating policy %s: %v", p.policy.Name, err)
		}
		if _, err := admin.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, &p.binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("creating binding %s: %v", p.binding.Name, err)
		}
	}
}

type policyPair struct {
	policy  admissionv1.ValidatingAdmissionPolicy
	binding admissionv1.ValidatingAdmissionPolicyBinding
}

// policyManifest decodes admission-policy.yaml.
func policyManifest(t *testing.T) []policyPair {
	t.Helper()
	f, err := os.Open("admission-policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := yaml.NewYAMLOrJSONDecoder(f, 4096)
	var pairs []policyPair
	for {
		var p policyPair
		if err := dec.Decode(&p.policy); errors.Is(err, io.EOF) {
			return pairs
		} else if err != nil {
			t.Fatalf("decoding admission-policy.yaml: %v", err)
		}
		if err := dec.Decode(&p.binding); err != nil {
			t.Fatalf("decoding admission-policy.yaml: the binding of %s: %v", p.policy.Name, err)
		}
		if p.policy.Kind != "ValidatingAdmissionPolicy" || p.binding.Kind != "ValidatingAdmissionPolicyBinding" ||
			p.binding.Spec.PolicyName != p.policy.Name {
			t.Fatalf("admission-policy.yaml: %s %s then %s %s, want a policy then its binding", p.policy.Kind, p.policy.Name,
				p.binding.Kind, p.binding.Name)
		}
		pairs = append(pairs, p)
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

	merge := func(c kubernetes.Interface, node string, patch any) error { return patchNode(ctx, t, c, node, patch) }
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

	// Every pod warned first: the pod policy admits the warnings.
	cfg := drain.DefaultConfig()
	cfg.WarnAll = true
	rep, err := drain.New(client, cfg, nil).Run(ctx, drain.Request{
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
		"metadata": map[string]any{"labels": map[string]any{drain.ExcludeFromLBLabel: nil}, "annotations": map[string]any{drain.AnnotationEventID: nil, drain.AnnotationRestore: nil}},
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

// nodePolicy is the name the node policy's refusals carry.
const nodePolicy = "drainpipe-node-changes"

// patchNode sends a JSON merge patch of node as c.
func patchNode(ctx context.Context, t *testing.T, c kubernetes.Interface, node string, patch any) error {
	t.Helper()
	b, err := json.Marshal(patch)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, b, metav1.PatchOptions{})
	return err
}

// TestAdmissionPolicyTouchesOnlyDrainpipesOwn: under the policy, group
// drainpipe may not put its taint with NoExecute, give back a cordon,
// label or annotation that is not its own, nor write an outsized
// annotation; it still cordons, taints (NoSchedule, PreferNoSchedule),
// taints out of service and gives back its own hold exactly.
func TestAdmissionPolicyTouchesOnlyDrainpipesOwn(t *testing.T) {
	ctx, env, client, nodes, merge := policyScene(t, 3)

	// An administrator's node: cordoned, excluded from load balancers, and
	// annotated under drainpipe.dev/ (not a key Drainpipe writes).
	admins, oos := nodes[0].Name, nodes[1].Name
	if err := merge(env.Client, admins, map[string]any{"spec": map[string]any{"unschedulable": true},
		"metadata": map[string]any{"labels": map[string]string{drain.ExcludeFromLBLabel: "true"},
			"annotations": map[string]string{"drainpipe.dev/owner": "platform"}}}); err != nil {
		t.Fatal(err)
	}
	// An administrator's out-of-service taint.
	adminOOS := corev1.Taint{Key: drain.OutOfServiceTaintKey, Value: "nodeshutdown", Effect: corev1.TaintEffectNoExecute}
	if err := merge(env.Client, oos, map[string]any{"spec": map[string]any{"taints": []corev1.Taint{adminOOS}}}); err != nil {
		t.Fatal(err)
	}
	own := func(effect corev1.TaintEffect) map[string]any {
		return map[string]any{"spec": map[string]any{"taints": []corev1.Taint{{Key: drain.TaintKey, Value: "spot-interruption", Effect: effect}}}}
	}
	for _, c := range []struct {
		name, node string
		patch      any
	}{
		{"NoExecute taint", admins, own(corev1.TaintEffectNoExecute)},
		{"uncordon of a node someone else cordoned", admins, map[string]any{"spec": map[string]any{"unschedulable": false}}},
		{"removing an admin's load-balancer label", admins, labelPatch(drain.ExcludeFromLBLabel, nil)},
		{"changing an admin's load-balancer label", admins, labelPatch(drain.ExcludeFromLBLabel, "false")},
		{"changing an admin-written drainpipe.dev annotation", admins, annotationPatch("drainpipe.dev/owner", "me")},
		{"removing an admin-written drainpipe.dev annotation", admins, annotationPatch("drainpipe.dev/owner", nil)},
		{"200 KiB annotation", admins, annotationPatch(drain.AnnotationReport, strings.Repeat("x", 200<<10))},
		{"claiming an admin's cordon as its own", admins, annotationPatch(drain.AnnotationRestore, `{"unschedulable":true,"label":true}`)},
		{"claiming an admin's out-of-service taint", oos, annotationPatch(drain.AnnotationOutOfService, "true")},
		{"removing an admin's out-of-service taint", oos, map[string]any{"spec": map[string]any{"taints": []corev1.Taint{}}}},
	} {
		t.Run("refused "+c.name, func(t *testing.T) {
			if err := merge(client, c.node, c.patch); err == nil || !strings.Contains(err.Error(), nodePolicy) {
				t.Errorf("%s as group drainpipe: %v, want refused by %s", c.name, err, nodePolicy)
			}
		})
	}

	cordon := func(t *testing.T, node string, effect corev1.TaintEffect) {
		t.Helper()
		cfg := drain.DefaultConfig()
		cfg.TaintEffect = string(effect)
		if _, err := drain.New(client, cfg, nil).Run(ctx, drain.Request{Node: node, Kind: "spot-interruption", EventID: "vap-own",
			Deadline: time.Now().Add(time.Hour)}); err != nil {
			t.Fatalf("cordoning as group drainpipe (%s): %v", effect, err)
		}
	}
	t.Run("allowed cordon of an admin's node, given back as the admin left it", func(t *testing.T) {
		cordon(t, admins, corev1.TaintEffectNoSchedule)
		if err := merge(client, admins, map[string]any{"spec": map[string]any{"unschedulable": false}}); err == nil ||
			!strings.Contains(err.Error(), nodePolicy) {
			t.Errorf("uncordon of the admin's cordon under Drainpipe's hold: %v, want refused by %s", err, nodePolicy)
		}
		if g, err := drain.Uncordon(ctx, client, admins, drain.Match{}); err != nil || !g.Back {
			t.Fatalf("giving back as group drainpipe: %+v, %v", g, err)
		}
		n, err := env.Client.CoreV1().Nodes().Get(ctx, admins, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !n.Spec.Unschedulable || n.Labels[drain.ExcludeFromLBLabel] != "true" || n.Annotations["drainpipe.dev/owner"] != "platform" ||
			len(n.Spec.Taints) > 0 {
			t.Errorf("admin's node after the give-back: unschedulable %v, labels %v, annotations %v, taints %v; want as the admin left it",
				n.Spec.Unschedulable, n.Labels, n.Annotations, n.Spec.Taints)
		}
	})
	t.Run("allowed own hold: cordon, taint, out of service, give back", func(t *testing.T) {
		mine := nodes[2].Name
		if err := merge(env.Client, mine, labelPatch(drain.ExcludeFromLBLabel, "false")); err != nil {
			t.Fatal(err)
		}
		cordon(t, mine, corev1.TaintEffectNoSchedule)
		cordon(t, mine, corev1.TaintEffectPreferNoSchedule)
		env.StopKubelet(ctx, mine)
		if wrote, err := drain.MarkOutOfService(ctx, client, mine, time.Now()); err != nil || !wrote {
			t.Fatalf("out-of-service taint as group drainpipe: wrote %v, %v", wrote, err)
		}
		if g, err := drain.Uncordon(ctx, client, mine, drain.Match{Running: true}); err != nil || !g.Back {
			t.Fatalf("giving back its own hold as group drainpipe: %+v, %v", g, err)
		}
		n, err := env.Client.CoreV1().Nodes().Get(ctx, mine, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if n.Spec.Unschedulable || n.Labels[drain.ExcludeFromLBLabel] != "false" || hasTaint(n, drain.TaintKey) ||
			hasTaint(n, drain.OutOfServiceTaintKey) {
			t.Errorf("node after the give-back: unschedulable %v, labels %v, taints %v; want schedulable, label false, untainted",
				n.Spec.Unschedulable, n.Labels, n.Spec.Taints)
		}
	})
}

// The restore record is tied to the cordon it describes: group drainpipe
// cannot uncordon, or put the load-balancer label back, and keep the
// record (which could later undo an operator's cordon or label). And an
// operator's `kubectl uncordon` then `kubectl cordon` under Drainpipe's
// hold is theirs: the give-back leaves the node unschedulable.
func TestAdmissionPolicyTiesTheRecordToItsCordon(t *testing.T) {
	ctx, env, client, nodes, merge := policyScene(t, 2)
	hold := func(node string) {
		t.Helper()
		if _, err := drain.New(client, drain.DefaultConfig(), nil).Run(ctx, drain.Request{Node: node, Kind: "spot-interruption",
			EventID: "vap-record", Deadline: time.Now().Add(time.Hour)}); err != nil {
			t.Fatalf("cordoning as group drainpipe: %v", err)
		}
	}
	held := nodes[0].Name
	hold(held)
	for _, c := range []struct {
		name  string
		patch any
	}{
		{"uncordon keeping the record", map[string]any{"spec": map[string]any{"unschedulable": false}}},
		{"label put back keeping the record", labelPatch(drain.ExcludeFromLBLabel, nil)},
	} {
		if err := merge(client, held, c.patch); err == nil || !strings.Contains(err.Error(), nodePolicy) {
			t.Errorf("%s as group drainpipe: %v, want refused by %s", c.name, err, nodePolicy)
		}
	}

	operators := nodes[1].Name
	hold(operators)
	for _, v := range []any{nil, true} { // kubectl uncordon, then kubectl cordon
		body, _ := json.Marshal(map[string]any{"spec": map[string]any{"unschedulable": v}})
		if _, err := env.Client.CoreV1().Nodes().Patch(ctx, operators, types.MergePatchType, body,
			metav1.PatchOptions{FieldManager: "kubectl-cordon"}); err != nil {
			t.Fatal(err)
		}
	}
	if g, err := drain.Uncordon(ctx, client, operators, drain.Match{}); err != nil || !g.Back {
		t.Fatalf("giving back as group drainpipe: %+v, %v", g, err)
	}
	n, err := env.Client.CoreV1().Nodes().Get(ctx, operators, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !n.Spec.Unschedulable || drain.ReadMarks(n).Held() {
		t.Errorf("after the give-back: unschedulable %v, marks %+v; want the operator's cordon kept, Drainpipe's marks gone",
			n.Spec.Unschedulable, drain.ReadMarks(n))
	}
}

// policyScene is the RBAC scene with the admission policies applied and
// in force (a foreign label refused), n nodes, and a merge patch of a node
// as a given client.
func policyScene(t *testing.T, n int) (context.Context, *fixture.Env, kubernetes.Interface, []*corev1.Node,
	func(kubernetes.Interface, string, any) error) {
	t.Helper()
	ctx, env, client := rbacScene(t)
	applyPolicy(t, ctx, env.Client)
	nodes := env.Nodes(ctx, n, fixture.NodeOptions{})
	merge := func(c kubernetes.Interface, node string, patch any) error { return patchNode(ctx, t, c, node, patch) }
	awaitRefusal(ctx, t, nodePolicy, func() error { return merge(client, nodes[1].Name, labelPatch("team", "x")) },
		func() error { return merge(env.Client, nodes[1].Name, labelPatch("team", nil)) })
	return ctx, env, client, nodes, merge
}

func hasTaint(n *corev1.Node, key string) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}

// The out-of-service taint only where the kubelet is gone: group
// drainpipe cannot put it on a Ready node (it would evict every pod
// regardless of budgets and detach live volumes), cannot remove it and
// keep its mark, and a mark that outlived its taint does not make a later
// one (an operator's) Drainpipe's to remove.
func TestAdmissionPolicyOutOfServiceOnlyWithoutKubelet(t *testing.T) {
	ctx, env, client, nodes, merge := policyScene(t, 2)
	ready, stopped := nodes[0].Name, nodes[1].Name
	if _, err := drain.MarkOutOfService(ctx, client, ready, time.Now()); err == nil || !strings.Contains(err.Error(), nodePolicy) {
		t.Errorf("out-of-service taint on a Ready node as group drainpipe: %v, want refused by %s", err, nodePolicy)
	}
	env.StopKubelet(ctx, stopped)
	if wrote, err := drain.MarkOutOfService(ctx, client, stopped, time.Now()); err != nil || !wrote {
		t.Fatalf("out-of-service taint on a node whose kubelet is gone: wrote %v, %v", wrote, err)
	}
	n, err := env.Client.CoreV1().Nodes().Get(ctx, stopped, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	without := func(n *corev1.Node) []corev1.Taint {
		var out []corev1.Taint
		for _, tn := range n.Spec.Taints {
			if tn.Key != drain.OutOfServiceTaintKey {
				out = append(out, tn)
			}
		}
		return out
	}
	if err := merge(client, stopped, map[string]any{"spec": map[string]any{"taints": without(n)}}); err == nil ||
		!strings.Contains(err.Error(), nodePolicy) {
		t.Errorf("removing its out-of-service taint and keeping the mark: %v, want refused by %s", err, nodePolicy)
	}
	// An operator removes Drainpipe's taint (the mark stays), then puts their own.
	if err := merge(env.Client, stopped, map[string]any{"spec": map[string]any{"taints": without(n)}}); err != nil {
		t.Fatal(err)
	}
	later := metav1.NewTime(time.Now().Add(time.Hour).Truncate(time.Second))
	theirs := append(without(n), corev1.Taint{Key: drain.OutOfServiceTaintKey, Value: "nodeshutdown",
		Effect: corev1.TaintEffectNoExecute, TimeAdded: &later})
	if err := merge(env.Client, stopped, map[string]any{"spec": map[string]any{"taints": theirs}}); err != nil {
		t.Fatal(err)
	}
	if err := merge(client, stopped, map[string]any{"spec": map[string]any{"taints": without(n)},
		"metadata": map[string]any{"annotations": map[string]any{drain.AnnotationOutOfService: nil}}}); err == nil ||
		!strings.Contains(err.Error(), nodePolicy) {
		t.Errorf("removing an operator's out-of-service taint under a stale mark: %v, want refused by %s", err, nodePolicy)
	}
	if m := drain.ReadMarks(mustNode(ctx, t, env.Client, stopped)); m.OutOfSvc {
		t.Errorf("marks %+v: the operator's taint read as Drainpipe's", m)
	}
}

func mustNode(ctx context.Context, t *testing.T, c kubernetes.Interface, name string) *corev1.Node {
	t.Helper()
	n, err := c.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
