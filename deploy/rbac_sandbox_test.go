// Package deploy holds the Kubernetes manifests users apply by hand. The test
// proves rbac.yaml against a real API server: the drain engine, acting as a
// member of group drainpipe, drains a node with nothing more than these
// permissions, and is refused what it does not need.
package deploy_test

import (
	"context"
	"errors"
	"io"
	"os"
	"slices"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/group"
	"github.com/drainpipe/drainpipe/internal/kevents"
	"github.com/drainpipe/drainpipe/test/sandbox"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

func TestMain(m *testing.M) { sandbox.Main(m) }

// decodeManifest decodes exactly len(objs) documents of file into objs.
func decodeManifest(t *testing.T, file string, objs ...any) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := yaml.NewYAMLOrJSONDecoder(f, 4096)
	for _, obj := range objs {
		if err := dec.Decode(obj); err != nil {
			t.Fatalf("decoding %s: %v", file, err)
		}
	}
	if err := dec.Decode(&struct{}{}); !errors.Is(err, io.EOF) {
		t.Fatalf("%s has more than %d documents (%v)", file, len(objs), err)
	}
}

// asDrainpipe is a client with the function's identity as EKS maps it:
// some user in group drainpipe.
func asDrainpipe(t *testing.T, admin *rest.Config) kubernetes.Interface {
	t.Helper()
	cfg := rest.CopyConfig(admin)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "drainpipe-function", Groups: []string{"drainpipe"}}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// rbacScene is a test's namespace with rbac.yaml applied, and a client
// acting as the function: a member of group drainpipe.
func rbacScene(t *testing.T) (context.Context, *fixture.Env, kubernetes.Interface) {
	t.Helper()
	sb := sandbox.ForTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	env := fixture.New(t, sb.RESTConfig())
	env.ApplyRBAC(ctx, "rbac.yaml", "drainpipe")
	return ctx, env, asDrainpipe(t, sb.RESTConfig())
}

func TestRBACIsEnoughToDrain(t *testing.T) {
	ctx, env, client := rbacScene(t)

	nodes := env.Nodes(ctx, 2, fixture.NodeOptions{})
	env.Deployment(ctx, "web", 2, fixture.OnNode(nodes[0].Name))
	env.WaitDeploymentReady(ctx, "web")
	env.DaemonSet(ctx, "agent")
	if len(env.PodsOnNode(ctx, nodes[0].Name)) == 0 {
		t.Fatal("no pods on the node to drain")
	}

	// As the function runs it: with its Kubernetes events (core/v1 only).
	rec := kevents.New(client, kevents.Options{})
	dcfg := drain.DefaultConfig()
	dcfg.OnEvent = rec.Observe
	rep, err := rec.Wrap(drain.New(client, dcfg, nil)).Run(ctx, drain.Request{
		Node: nodes[0].Name, Kind: "spot-interruption", EventID: "rbac-test", Evict: true,
	})
	if err != nil {
		t.Fatalf("drain as group drainpipe: %v", err)
	}
	if !rep.Done || len(rep.Evicted) != 2 || len(rep.Failed) > 0 {
		t.Errorf("report %+v: want done with the 2 web pods evicted and none failed", rep)
	}
	events, err := env.Client.CoreV1().Events("").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + nodes[0].Name})
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, e := range events.Items {
		reasons = append(reasons, e.Reason)
	}
	if !slices.Contains(reasons, "SpotInterruption") || !slices.Contains(reasons, "Drained") {
		t.Errorf("node events %v, want SpotInterruption and Drained recorded as group drainpipe", reasons)
	}

	// Reading budgets, to finish an eviction one granted before a cut.
	ns := env.Namespace
	if _, err := client.PolicyV1().PodDisruptionBudgets(ns).List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("list poddisruptionbudgets as group drainpipe: %v", err)
	}

	// Least privilege: what a drain never needs is refused.
	refused := map[string]error{}
	_, refused["list secrets"] = client.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
	refused["delete pods"] = client.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	refused["delete node"] = client.CoreV1().Nodes().Delete(ctx, nodes[1].Name, metav1.DeleteOptions{})
	_, refused["get poddisruptionbudget"] = client.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, "any", metav1.GetOptions{})
	refused["delete poddisruptionbudgets"] = client.PolicyV1().PodDisruptionBudgets(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	_, refused["list deployments"] = client.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	// Trimmed: the drain records core/v1 events only.
	_, refused["create events.k8s.io event"] = client.EventsV1().Events(ns).Create(ctx, &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: "rbac-test", Namespace: ns}, EventTime: metav1.NowMicro(),
		ReportingController: "drainpipe.dev/test", ReportingInstance: "test", Action: "Test", Reason: "Test", Type: "Normal",
	}, metav1.CreateOptions{})
	for what, err := range refused {
		if !apierrors.IsForbidden(err) {
			t.Errorf("%s as group drainpipe: %v, want Forbidden", what, err)
		}
	}
}

// The group limit's slots, as the function takes them, with nothing more
// than rbac.yaml's Role: leases in namespace drainpipe only.
func TestRBACIsEnoughForDrainSlots(t *testing.T) {
	ctx, env, client := rbacScene(t)
	nodes := env.Nodes(ctx, 2, fixture.NodeOptions{Labels: map[string]string{drain.KarpenterNodePoolLabel: "rbac-" + env.Pool}})

	// A percentage: the group counted with one LIST of its nodes.
	l := group.New(group.Config{Max: group.Limit{Percent: 50}, Namespace: group.DefaultNamespace}, nil)
	slot, err := l.Enter(ctx, client, group.Who{Node: nodes[0].Name}, nil)
	if err != nil || slot == nil {
		t.Fatalf("taking a slot as group drainpipe: %v, %v", slot, err)
	}
	// A redelivery renews its own slot (an update).
	if again, err := l.Enter(ctx, client, group.Who{Node: nodes[0].Name}, nil); err != nil || again == nil {
		t.Fatalf("renewing the slot as group drainpipe: %v, %v", again, err)
	}
	wctx, stop := context.WithCancel(ctx)
	_, err = l.Enter(wctx, client, group.Who{Node: nodes[1].Name}, func(group.Busy) { stop() })
	stop()
	var busy *group.Busy
	if !errors.As(err, &busy) {
		t.Errorf("second node of a two-node group at 50%%: %v, want Busy", err)
	}
	if err := slot.Release(ctx); err != nil {
		t.Errorf("releasing the slot as group drainpipe: %v", err)
	}

	// Least privilege: leases elsewhere are refused.
	refused := map[string]error{}
	_, refused["create lease in another namespace"] = client.CoordinationV1().Leases(env.Namespace).Create(ctx,
		&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "rbac-test"}}, metav1.CreateOptions{})
	_, refused["list leases in kube-node-lease"] = client.CoordinationV1().Leases("kube-node-lease").List(ctx, metav1.ListOptions{})
	_, refused["list leases cluster-wide"] = client.CoordinationV1().Leases("").List(ctx, metav1.ListOptions{})
	for what, err := range refused {
		if !apierrors.IsForbidden(err) {
			t.Errorf("%s as group drainpipe: %v, want Forbidden", what, err)
		}
	}
}
