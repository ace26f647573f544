package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/fleet"
	"github.com/drainpipe/drainpipe/test/sandbox"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// TestEKSEveryManifest runs the function's whole path as on a hardened
// EKS cluster: the real bootstrap authenticated as group drainpipe, with
// every manifest of deploy/ applied (RBAC, both admission policies, flow
// control). A Spot warning drains (every pod warned first), a terminate
// hook drains and completes, a stopped instance's node is tainted out of
// service, and its give-back puts the operator's label back: a manifest
// that refuses any of it fails here.
func TestEKSEveryManifest(t *testing.T) {
	// The test's clock starts once the scene is there, as in testEKSDrain:
	// building the bootstrap and starting the sandbox can take most of it
	// on a loaded machine.
	sb, c := eksCluster(t)
	l := newEKSLive(t, served, c.Function)
	ctx := testContext(t)
	l.k8s.ApplyRBAC(ctx, rbacManifest(t), sandbox.DrainpipeGroup)
	deploy := filepath.Dir(rbacManifest(t))
	schemas, levels, err := fleet.ApplyFlowControl(ctx, l.k8s.Client, filepath.Join(deploy, "flowcontrol.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // the shared sandbox's other tests run without them
		fc := l.k8s.Client.FlowcontrolV1()
		for _, fs := range schemas {
			_ = fc.FlowSchemas().Delete(context.Background(), fs.Name, metav1.DeleteOptions{})
		}
		for name := range levels {
			_ = fc.PriorityLevelConfigurations().Delete(context.Background(), name, metav1.DeleteOptions{})
		}
	})
	applyAdmissionPolicies(ctx, t, l.k8s, sb.RESTConfig(), filepath.Join(deploy, "admission-policy.yaml"))

	nodes := l.nodes(ctx, 3, served)
	spot, hooked, stopped := nodes[0], nodes[1], nodes[2]
	l.k8s.Deployment(ctx, "web", 2, fixture.PinnedTo(spot.Name))
	l.k8s.Deployment(ctx, "api", 1, fixture.PinnedTo(hooked.Name))
	l.k8s.Deployment(ctx, "db", 1, fixture.OnNode(stopped.Name))
	l.k8s.DaemonSet(ctx, "agent")
	l.k8s.WaitDeploymentReady(ctx, "db")
	// The operator's own exclusion label, which the give-back puts back.
	patch := []byte(`{"metadata":{"labels":{"` + excludeLabel + `":"false"}}}`)
	if _, err := l.k8s.Client.CoreV1().Nodes().Patch(ctx, stopped.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	l.k8s.StopKubelet(ctx, stopped.Name) // the instance is stopped: its kubelet is gone
	hook := l.pendingHook(hooked, "7a1e7b9c-0000-4000-8000-0000000000e9")
	inst := awsfake.Instance{ID: fixture.InstanceID(stopped), PrivateDNSName: stopped.Name,
		AvailabilityZone: stopped.Labels[corev1.LabelTopologyZone], Lifecycle: "spot",
		Tags: map[string]string{"eks:cluster-name": served}, State: "stopped", LaunchTime: time.Now().Add(-time.Hour)}
	l.aws.AddInstances(inst)
	l.start(t, "DRAINPIPE_WARN_PODS=all")

	res := l.invoke(ctx, t, time.Minute,
		message{id: "spot", body: spotWarning(t, fixture.InstanceID(spot))},
		message{id: "hook", body: terminateHook(t, hook)},
		message{id: "stopped", body: stateChange(t, inst.ID, "stopped")})

	if diff := cmp.Diff([]string{}, failedIDs(batchResponse(t, res.Body))); diff != "" {
		t.Errorf("batch item failures (-want +got):\n%s", diff)
	}
	for id, got := range recordLogs(l.rt) {
		if got.Outcome != "done" {
			t.Errorf("record %s logged as %+v, want done", id, got)
		}
	}
	l.checkNode(ctx, t, spot.Name, true, 0)
	l.checkNode(ctx, t, hooked.Name, true, 0)
	if diff := cmp.Diff([]awsfake.Completion{{LifecycleAction: hook, Result: "CONTINUE"}}, l.aws.Completed()); diff != "" {
		t.Errorf("completed lifecycle actions (-want +got):\n%s", diff)
	}
	if logsContain(l.rt, "annotating pod before its eviction") {
		t.Error("a pod's warning was refused")
	}
	if n := l.getNode(ctx, t, stopped.Name); !strings.Contains(strings.Join(drainpipeTrace(n), ","), "out-of-service") {
		t.Errorf("stopped instance's node: Drainpipe marks %v, want the out-of-service taint", drainpipeTrace(n))
	}

	// The instance runs again: its node is given back as the operator had it.
	inst.State, inst.LaunchTime = "running", time.Now()
	l.aws.AddInstances(inst)
	running := freshEvent(t, "eventbridge-state-change-stopping.json", both(forEC2Instance(inst.ID, awsfake.Region),
		func(ev map[string]any) { ev["detail"].(map[string]any)["state"] = "running" }, dated(time.Now().Add(time.Second))))
	res = l.invoke(ctx, t, time.Minute, message{id: "running", body: running})
	if diff := cmp.Diff([]string{}, failedIDs(batchResponse(t, res.Body))); diff != "" {
		t.Errorf("batch item failures after the start (-want +got):\n%s", diff)
	}
	back := l.getNode(ctx, t, stopped.Name)
	if back.Spec.Unschedulable || back.Labels[excludeLabel] != "false" || len(drainpipeTrace(back)) > 0 {
		t.Errorf("given-back node: unschedulable %v, exclusion label %q, Drainpipe marks %v; want schedulable, \"false\", none",
			back.Spec.Unschedulable, back.Labels[excludeLabel], drainpipeTrace(back))
	}
}

// applyAdmissionPolicies creates the policies and bindings of path and
// waits until each refuses group drainpipe a change outside its job (the
// API server loads them asynchronously); they are deleted when the test
// ends, so the shared sandbox's other tests are not bound by them.
func applyAdmissionPolicies(ctx context.Context, t *testing.T, k8s *fixture.Env, admin *rest.Config, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	api := k8s.Client.AdmissionregistrationV1()
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var policies int
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decoding %s: %v", path, err)
		}
		var meta metav1.TypeMeta
		if err := json.Unmarshal(raw, &meta); err != nil {
			t.Fatal(err)
		}
		switch meta.Kind {
		case "ValidatingAdmissionPolicy":
			var p admissionv1.ValidatingAdmissionPolicy
			if err := json.Unmarshal(raw, &p); err != nil {
				t.Fatal(err)
			}
			if _, err := api.ValidatingAdmissionPolicies().Create(ctx, &p, metav1.CreateOptions{}); err != nil {
				t.Fatalf("creating policy %s: %v", p.Name, err)
			}
			policies++
			t.Cleanup(func() {
				_ = api.ValidatingAdmissionPolicies().Delete(context.Background(), p.Name, metav1.DeleteOptions{})
			})
		case "ValidatingAdmissionPolicyBinding":
			var b admissionv1.ValidatingAdmissionPolicyBinding
			if err := json.Unmarshal(raw, &b); err != nil {
				t.Fatal(err)
			}
			if _, err := api.ValidatingAdmissionPolicyBindings().Create(ctx, &b, metav1.CreateOptions{}); err != nil {
				t.Fatalf("creating binding %s: %v", b.Name, err)
			}
			t.Cleanup(func() {
				_ = api.ValidatingAdmissionPolicyBindings().Delete(context.Background(), b.Name, metav1.DeleteOptions{})
			})
		default:
			t.Fatalf("%s holds a %s", path, meta.Kind)
		}
	}
	if policies != 2 {
		t.Fatalf("%s holds %d policies, want the node and the pod policy", path, policies)
	}

	cfg := rest.CopyConfig(admin)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "drainpipe-probe", Groups: []string{sandbox.DrainpipeGroup}}
	as, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	probeNode := k8s.Node(ctx, fixture.NodeOptions{Region: awsfake.Region})
	probePod := k8s.Pod(ctx, "policy-probe", fixture.OnNode(probeNode.Name))
	foreign := []byte(`{"metadata":{"labels":{"example.com/probe":"x"}}}`)
	undo := []byte(`{"metadata":{"labels":{"example.com/probe":null}}}`)
	for _, probe := range []struct {
		policy string
		patch  func(kubernetes.Interface, []byte) error
	}{
		{"drainpipe-node-changes", func(c kubernetes.Interface, b []byte) error {
			_, err := c.CoreV1().Nodes().Patch(ctx, probeNode.Name, types.MergePatchType, b, metav1.PatchOptions{})
			return err
		}},
		{"drainpipe-pod-changes", func(c kubernetes.Interface, b []byte) error {
			_, err := c.CoreV1().Pods(k8s.Namespace).Patch(ctx, probePod.Name, types.MergePatchType, b, metav1.PatchOptions{})
			return err
		}},
	} {
		for {
			err := probe.patch(as, foreign)
			if err != nil && strings.Contains(err.Error(), probe.policy) {
				break
			}
			if err == nil { // admitted before the policy was active
				_ = probe.patch(k8s.Client, undo)
			}
			select {
			case <-ctx.Done():
				t.Fatalf("policy %s never refused group drainpipe a foreign label; last answer: %v", probe.policy, err)
			case <-time.After(100 * time.Millisecond): // polling a condition, bounded by ctx
			}
		}
	}
}
