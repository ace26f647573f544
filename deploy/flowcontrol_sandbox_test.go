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
// drainpipe) are served by its own level and another tenant's are not.
func TestFlowControlClassifiesDrainpipe(t *testing.T) {
	sb := sandbox.ForTest(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	admin, err := kubernetes.NewForConfig(sb.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	var wantPL flowcontrolv1.PriorityLevelConfiguration
	var wantFS flowcontrolv1.FlowSchema
	decodeManifest(t, "flowcontrol.yaml", &wantPL, &wantFS)
	fs, pl, err := fleet.ApplyFlowControl(ctx, admin, "flowcontrol.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if fs.Spec.PriorityLevelConfiguration.Name != pl.Name {
		t.Errorf("FlowSchema %s points at level %q, want %q", fs.Name, fs.Spec.PriorityLevelConfiguration.Name, pl.Name)
	}

	// The API server applies a new configuration asynchronously: ask
	// until the answers name the new schema (or the minute ends).
	var gotFS, gotPL string
	err = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		gotFS, gotPL = classified(ctx, t, sb.RESTConfig(), "drainpipe-function", "drainpipe")
		return gotFS == string(fs.UID), nil
	})
	if err != nil || gotPL != string(pl.UID) {
		t.Errorf("a request as group drainpipe was served by flow schema %s, level %s; want %s (%s), %s (%s)",
			gotFS, gotPL, fs.UID, fs.Name, pl.UID, pl.Name)
	}
	if otherFS, otherPL := classified(ctx, t, sb.RESTConfig(), "neighbour", "tenants"); otherFS == string(fs.UID) || otherPL == string(pl.UID) {
		t.Errorf("another tenant's request was served by Drainpipe's flow schema or level")
	}

	// The schema's status says its level exists (not dangling).
	got, err := admin.FlowcontrolV1().FlowSchemas().Get(ctx, fs.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range got.Status.Conditions {
		if c.Type == flowcontrolv1.FlowSchemaConditionDangling && c.Status != flowcontrolv1.ConditionFalse {
			t.Errorf("FlowSchema %s is dangling: %s", fs.Name, c.Message)
		}
	}
	if wantFS.Spec.MatchingPrecedence >= 9000 || wantPL.Spec.Limited == nil || *wantPL.Spec.Limited.BorrowingLimitPercent != 0 {
		t.Errorf("flowcontrol.yaml: precedence %d must beat service-accounts (9000), and the level must not borrow",
			wantFS.Spec.MatchingPrecedence)
	}
}

// classified sends one GET of the nodes as user in group and returns the
// flow schema and priority level UIDs the API server names in its answer.
func classified(ctx context.Context, t *testing.T, admin *rest.Config, user, group string) (fs, pl string) {
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
	_ = client.CoreV1().RESTClient().Get().AbsPath("/api/v1/namespaces/default/configmaps").Do(ctx).Error()
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
