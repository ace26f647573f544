package e2e

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/lambdart"
	"github.com/drainpipe/drainpipe/test/sandbox"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// eksCluster is the shared sandbox as EKS describes it (TestMain starts it
// with the aws-iam-authenticator webhook, for cluster served).
func eksCluster(t *testing.T) (*sandbox.Sandbox, sandbox.EKSCluster) {
	t.Helper()
	sb := sandbox.ForTest(t)
	c, ok := sb.EKS()
	if !ok {
		t.Fatal("the shared sandbox runs without EKS authentication")
	}
	return sb, c
}

// newEKSLive sets a scene up in EKS mode: no kubeconfig, the function asks
// the EKS fake for cluster (which answers with the sandbox's endpoint and
// CA) and signs its own tokens with id's credentials; the sandbox's
// aws-iam-authenticator webhook decides who that is.
func newEKSLive(t *testing.T, cluster string, id sandbox.AWSIdentity) *live {
	t.Helper()
	l := newLive(t)
	_, c := eksCluster(t)
	l.aws.AddCluster(awsfake.Cluster{Name: cluster, Endpoint: c.Endpoint, CAData: c.CAData})
	l.env = slices.DeleteFunc(l.env, func(e string) bool {
		return strings.HasPrefix(e, "DRAINPIPE_KUBECONFIG=") || strings.HasPrefix(e, "DRAINPIPE_CLUSTERS=")
	})
	l.env = append(append(l.env, "DRAINPIPE_CLUSTERS="+cluster), id.Env()...)
	// The function signs every AWS call with the role's session
	// credentials, which the fake (it verifies signatures) must know.
	l.aws.AllowCredentials(id.AccessKeyID, id.SecretAccessKey)
	return l
}

// rbacManifest is deploy/rbac.yaml.
func rbacManifest(t *testing.T) string {
	t.Helper()
	root, err := lambdart.ModuleRoot(t.Context(), ".")
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "deploy", "rbac.yaml")
}

// TestEKSAuth runs the function as on EKS: the real bootstrap, no
// kubeconfig, the endpoint and CA from DescribeCluster, a token it signs
// itself with the mapped role's credentials, authenticated by the real
// aws-iam-authenticator and authorized only by deploy/rbac.yaml. Tokens the
// webhook must refuse are refused, and the function says why.
func TestEKSAuth(t *testing.T) {
	t.Run("mapped role drains and completes", testEKSDrain)
	t.Run("token for another cluster", func(t *testing.T) {
		_, c := eksCluster(t)
		testEKSRefused(t, "other-cluster", c.Function)
	})
	t.Run("unmapped role", func(t *testing.T) {
		_, c := eksCluster(t)
		testEKSRefused(t, served, c.Unmapped)
	})
	t.Run("expired token", testEKSExpired)
}

func testEKSDrain(t *testing.T) {
	// The test's two minutes start once the scene is there: building the
	// bootstrap and starting the sandbox (each bounded by its own wait)
	// can take most of them on a loaded machine, and ran out the test's
	// clock before the function ever ran.
	sb, c := eksCluster(t)
	l := newEKSLive(t, served, c.Function)
	ctx := testContext(t)
	l.k8s.ApplyRBAC(ctx, rbacManifest(t), sandbox.DrainpipeGroup)
	nodes := l.nodes(ctx, 2, served)
	l.k8s.Deployment(ctx, "web", 2, fixture.PinnedTo(nodes[0].Name))
	l.k8s.Deployment(ctx, "api", 1, fixture.PinnedTo(nodes[1].Name))
	l.k8s.DaemonSet(ctx, "agent")
	hook := l.pendingHook(nodes[1], "7a1e7b9c-0000-4000-8000-0000000000e1")
	l.start(t)

	res := l.invoke(ctx, t, time.Minute,
		message{id: "spot-eks", body: spotWarning(t, fixture.InstanceID(nodes[0]))},
		message{id: "hook-eks", body: terminateHook(t, hook)})

	if diff := cmp.Diff([]string{}, failedIDs(batchResponse(t, res.Body))); diff != "" {
		t.Errorf("batch item failures (-want +got):\n%s", diff)
	}
	l.checkNode(ctx, t, nodes[0].Name, true, 0)
	l.checkNode(ctx, t, nodes[1].Name, true, 0)
	if diff := cmp.Diff([]awsfake.Completion{{LifecycleAction: hook, Result: "CONTINUE"}}, l.aws.Completed()); diff != "" {
		t.Errorf("completed lifecycle actions (-want +got):\n%s", diff)
	}
	// The identity the webhook gave the function's requests.
	if !webhookLogged(t, sb, `"msg":"access granted"`, `"username":"drainpipe"`, `"groups":["drainpipe"]`) {
		t.Error("the webhook never granted access as user drainpipe, group drainpipe")
	}
	noSecretsLogged(t, l.rt, c.Function)
}

// testEKSRefused starts the function for cluster with id's credentials and
// a spot warning for a node of it; the API server refuses every request,
// so the record is retried with the reason, and the node is untouched.
func testEKSRefused(t *testing.T, cluster string, id sandbox.AWSIdentity) {
	l := newEKSLive(t, cluster, id) // before the test's clock, as in testEKSDrain
	ctx := testContext(t)
	n := l.node(ctx, cluster)
	l.k8s.Deployment(ctx, "web", 1, fixture.PinnedTo(n.Name))
	l.start(t)

	res := l.invoke(ctx, t, time.Minute, message{id: "spot-refused", body: spotWarning(t, fixture.InstanceID(n))})

	if diff := cmp.Diff([]string{"spot-refused"}, failedIDs(batchResponse(t, res.Body))); diff != "" {
		t.Errorf("batch item failures (-want +got):\n%s", diff)
	}
	l.checkNode(ctx, t, n.Name, false, 1)
	rec, _, ok := logLine(t, l.rt, map[string]string{"msg": "record handled", "outcome": "retry"})
	if !ok {
		t.Fatal("no retried record logged")
	}
	if reason, _ := rec["reason"].(string); !strings.Contains(reason, "cluster "+cluster+": the API server refused the function's token (401 Unauthorized)") {
		t.Errorf("retry reason %q: want cluster %s refusing the token", reason, cluster)
	}
	noSecretsLogged(t, l.rt, id)
}

// noSecretsLogged fails t if any log line holds a token or the credentials.
func noSecretsLogged(t *testing.T, rt *lambdart.Runtime, id sandbox.AWSIdentity) {
	t.Helper()
	for _, s := range []string{"k8s-aws-v1.", "X-Amz-Signature", "Bearer ", id.SecretAccessKey, id.SessionToken} {
		if logsContain(rt, s) {
			t.Errorf("a log line contains %q", s)
		}
	}
}

// webhookLogged reports whether one line of the webhook's log holds all of subs.
func webhookLogged(t *testing.T, sb *sandbox.Sandbox, subs ...string) bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(sb.LogDir(), "authwebhook.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if !slices.ContainsFunc(subs, func(s string) bool { return !strings.Contains(line, s) }) {
			return true
		}
	}
	return false
}

// whoAmI asks the API server who a client is.
func whoAmI(ctx context.Context, client interface {
	Create(context.Context, *authenticationv1.SelfSubjectReview, metav1.CreateOptions) (*authenticationv1.SelfSubjectReview, error)
}) (authenticationv1.UserInfo, error) {
	r, err := client.Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return authenticationv1.UserInfo{}, err
	}
	return r.Status.UserInfo, nil
}
