// Package deploy holds the Kubernetes manifests users apply by hand. The test
// proves rbac.yaml against a real API server: the drain engine, acting as a
// member of group drainpipe, drains a node with nothing more than these
// permissions, and is refused what it does not need.
package deploy_test

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/test/sandbox"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

func TestMain(m *testing.M) { sandbox.Main(m) }

func TestRBACIsEnoughToDrain(t *testing.T) {
	sb := sandbox.ForTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	env := fixture.New(t, sb.RESTConfig())
	env.ApplyRBAC(ctx, "rbac.yaml", "drainpipe")

	// The function's identity as EKS maps it: some user in group drainpipe.
	cfg := rest.CopyConfig(sb.RESTConfig())
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "drainpipe-function", Groups: []string{"drainpipe"}}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}

	nodes := env.Nodes(ctx, 2, fixture.NodeOptions{})
	env.Deployment(ctx, "web", 2, fixture.OnNode(nodes[0].Name))
	env.WaitDeploymentReady(ctx, "web")
	env.DaemonSet(ctx, "agent")
	if len(env.PodsOnNode(ctx, nodes[0].Name)) == 0 {
		t.Fatal("no pods on the node to drain")
	}

	rep, err := drain.New(client, drain.DefaultConfig(), nil).Run(ctx, drain.Request{
		Node: nodes[0].Name, Kind: "spot-interruption", EventID: "rbac-test", Evict: true,
	})
	if err != nil {
		t.Fatalf("drain as group drainpipe: %v", err)
	}
	if !rep.Done || len(rep.Evicted) != 2 || len(rep.Failed) > 0 {
		t.Errorf("report %+v: want done with the 2 web pods evicted and none failed", rep)
	}

	// Least privilege: what a drain never needs is refused.
	ns := env.Namespace
	refused := map[string]error{}
	_, refused["list secrets"] = client.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
	refused["delete pods"] = client.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	refused["delete node"] = client.CoreV1().Nodes().Delete(ctx, nodes[1].Name, metav1.DeleteOptions{})
	_, refused["list deployments"] = client.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	for what, err := range refused {
		if !apierrors.IsForbidden(err) {
			t.Errorf("%s as group drainpipe: %v, want Forbidden", what, err)
		}
	}
}
