package deploy_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/drainpipe/drainpipe/test/fleet"
	"github.com/drainpipe/drainpipe/test/sandbox"
)

// TestFlowControlClassifiesDrainpipe applies flowcontrol.yaml to a real API
// server and checks, by the flow schema and priority level the server
// names in its answers, that Drainpipe's requests (any user in group
// drainpipe) are served by its own level, its node requests by a schema
// and a level of their own (no cordon queues behind an eviction), and
// another tenant's by neither.
func TestFlowControlClassifiesDrainpipe(t *testing.T) {
	ctx, sb, admin, schemas, levels := applyFlowControl(t)
	var wantPL, wantNodesPL flowcontrolv1.PriorityLevelConfiguration
	var nodesFS, restFS flowcontrolv1.FlowSchema
	decodeManifest(t, "flowcontrol.yaml", &wantPL, &wantNodesPL, &nodesFS, &restFS)
	uid := map[string]string{}
	for _, fs := range schemas {
		uid[fs.Name] = string(fs.UID)
	}
	want := map[string]string{nodesFS.Name: wantNodesPL.Name, restFS.Name: wantPL.Name}
	for fs, pl := range want {
		if levels[pl] == nil {
			t.Fatalf("level %s of schema %s not applied", pl, fs)
		}
	}

	// The API server applies a new configuration asynchronously: ask
	// until the answers name the new schemas (or the minute ends).
	for _, tc := range []struct{ path, schema string }{
		{"/api/v1/nodes/some-node", nodesFS.Name},
		{"/api/v1/namespaces/default/configmaps", restFS.Name},
	} {
		pl := levels[want[tc.schema]]
		var gotFS, gotPL string
		err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			gotFS, gotPL = classified(ctx, t, sb.RESTConfig(), "drainpipe-function", "drainpipe", tc.path)
			return gotFS == uid[tc.schema], nil
		})
		if err != nil || gotPL != string(pl.UID) {
			t.Errorf("GET %s as group drainpipe was served by flow schema %s, level %s; want %s (%s), %s (%s)",
				tc.path, gotFS, gotPL, uid[tc.schema], tc.schema, pl.UID, pl.Name)
		}
		otherFS, otherPL := classified(ctx, t, sb.RESTConfig(), "neighbour", "tenants", tc.path)
		for _, l := range levels {
			if otherFS == uid[tc.schema] || otherPL == string(l.UID) {
				t.Errorf("another tenant's GET %s was served by Drainpipe's flow schema or level %s", tc.path, l.Name)
			}
		}
	}

	// The schemas' status says their level exists (not dangling).
	for _, fs := range schemas {
		got, err := admin.FlowcontrolV1().FlowSchemas().Get(ctx, fs.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range got.Status.Conditions {
			if c.Type == flowcontrolv1.FlowSchemaConditionDangling && c.Status != flowcontrolv1.ConditionFalse {
				t.Errorf("FlowSchema %s is dangling: %s", fs.Name, c.Message)
			}
		}
	}
	if nodesFS.Spec.MatchingPrecedence >= restFS.Spec.MatchingPrecedence || restFS.Spec.MatchingPrecedence >= 9000 ||
		wantPL.Spec.Limited == nil || *wantPL.Spec.Limited.BorrowingLimitPercent != 0 ||
		wantNodesPL.Spec.Limited == nil || *wantNodesPL.Spec.Limited.BorrowingLimitPercent != 0 {
		t.Errorf("flowcontrol.yaml: precedences %d < %d < 9000 (the node schema first, both before service-accounts) and a level that does not borrow",
			nodesFS.Spec.MatchingPrecedence, restFS.Spec.MatchingPrecedence)
	}
}

// applyFlowControl applies flowcontrol.yaml to a sandbox of the test's
// own and returns a context of a minute, the sandbox, its admin client,
// the schemas and the levels by name.
func applyFlowControl(t *testing.T) (context.Context, *sandbox.Sandbox, kubernetes.Interface, []*flowcontrolv1.FlowSchema, map[string]*flowcontrolv1.PriorityLevelConfiguration) {
	t.Helper()
	sb := sandbox.ForTest(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	admin, err := kubernetes.NewForConfig(sb.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	schemas, levels, err := fleet.ApplyFlowControl(ctx, admin, "flowcontrol.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return ctx, sb, admin, schemas, levels
}

// classified sends one GET of path as user in group and returns the flow
// schema and priority level UIDs the API server names in its answer.
func classified(ctx context.Context, t *testing.T, admin *rest.Config, user, group, path string) (fs, pl string) {
	t.Helper()
	cfg := rest.CopyConfig(admin)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{group}}
	var h http.Header
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return headerTap{rt, &h} })
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Forbidden or not, the request was classified and the answer says how.
	_ = client.CoreV1().RESTClient().Get().AbsPath(path).Do(ctx).Error()
	if h == nil {
		t.Fatalf("no answer from the API server as %s", user)
	}
	return h.Get("X-Kubernetes-PF-FlowSchema-UID"), h.Get("X-Kubernetes-PF-PriorityLevel-UID")
}

// headerTap keeps the last response's headers.
type headerTap struct {
	rt http.RoundTripper
	h  *http.Header
}

func (t headerTap) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(r)
	if err == nil {
		*t.h = resp.Header.Clone()
	}
	return resp, err
}
