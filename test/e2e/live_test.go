package e2e

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/lambdart"
	"github.com/drainpipe/drainpipe/test/sandbox"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// served is the cluster the function is configured for.
const served = "e2e-cluster"

// taintKey is the taint a cordon adds (internal/drain.TaintKey; the e2e
// tests look at the cluster only through the API, as an operator would).
const taintKey = "drainpipe.dev/interruption"

// live is one test's function in local mode: the real bootstrap acting on
// the sandbox through its kubeconfig, with EC2, Auto Scaling and EKS served
// by the fakes.
type live struct {
	rt  *lambdart.Runtime
	aws *awsfake.Server
	k8s *fixture.Env
}

// startLive starts the function in local mode; env entries override the
// defaults.
func startLive(t *testing.T, env ...string) *live {
	t.Helper()
	path := bootstrap(t) // skips under -short before the sandbox starts
	sb := sandbox.ForTest(t)
	fake := awsfake.New()
	t.Cleanup(fake.Close)
	base := []string{
		"DRAINPIPE_KUBECONFIG=" + sb.KubeconfigPath(),
		"DRAINPIPE_CLUSTERS=" + served,
		"AWS_REGION=" + awsfake.Region,
		"AWS_DEFAULT_REGION=" + awsfake.Region,
		// aws-sdk-go-v2's config.LoadDefaultConfig honours these natively.
		"AWS_ENDPOINT_URL=" + fake.URL(),
		"AWS_ENDPOINT_URL_EC2=" + fake.URL(),
		"AWS_ENDPOINT_URL_AUTO_SCALING=" + fake.URL(),
		"AWS_ENDPOINT_URL_EKS=" + fake.URL(),
		"DRAINPIPE_LOG_LEVEL=debug",
	}
	opts := lambdart.Options{Bootstrap: path, Env: append(base, env...), FunctionName: "drainpipe-e2e", Region: awsfake.Region}
	if testing.Verbose() {
		opts.Stdout = t.Output()
	}
	rt := lambdart.Start(t, opts)
	// Skip before building a scene if the bootstrap refuses local mode.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if _, err := rt.Ready(ctx); err != nil {
		skipIfNotWired(t, rt, err)
		t.Fatal(err)
	}
	return &live{rt: rt, aws: fake, k8s: fixture.New(t, sb.RESTConfig())}
}

// skipIfNotWired skips the test when the bootstrap says (in an init error,
// a log line or a function error) that the live actor is not wired yet.
func skipIfNotWired(t *testing.T, rt *lambdart.Runtime, err error) {
	t.Helper()
	notWired := func(s string) bool { return strings.Contains(strings.ToLower(s), "not wired") }
	if notWired(err.Error()) || slices.ContainsFunc(rt.Logs(), notWired) {
		t.Skip("the live actor is not wired into lambda/main.go yet")
	}
}

// node creates an EKS-like node in the sandbox and the EC2 instance behind
// it, tagged for cluster.
func (l *live) node(ctx context.Context, cluster string) *corev1.Node {
	return l.nodes(ctx, 1, cluster)[0]
}

// nodes is node for n nodes, created in parallel.
func (l *live) nodes(ctx context.Context, n int, cluster string) []*corev1.Node {
	nodes := l.k8s.Nodes(ctx, n, fixture.NodeOptions{Region: awsfake.Region})
	for _, n := range nodes {
		l.aws.AddInstances(awsfake.Instance{
			ID:               fixture.InstanceID(n),
			PrivateDNSName:   n.Name,
			AvailabilityZone: n.Labels[corev1.LabelTopologyZone],
			Tags:             map[string]string{"eks:cluster-name": cluster},
			LaunchTime:       time.Now().Add(-time.Hour),
		})
	}
	return nodes
}

// invoke sends a batch and skips the test when the bootstrap says the live
// actor is not wired yet.
func (l *live) invoke(ctx context.Context, t *testing.T, timeout time.Duration, msgs ...message) lambdart.Response {
	t.Helper()
	res, err := l.rt.Invoke(ctx, sqsBatch(t, msgs...), timeout)
	if err != nil {
		skipIfNotWired(t, l.rt, err)
		t.Fatal(err)
	}
	if res.Error != nil {
		skipIfNotWired(t, l.rt, errors.New(res.Error.Message))
		t.Fatalf("function error: %+v", res.Error)
	}
	return res
}

// podsOn lists the pods bound to node that a drain must remove: all but
// DaemonSet and mirror pods.
func (l *live) podsOn(ctx context.Context, t *testing.T, node string) []string {
	t.Helper()
	list, err := l.k8s.Client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node).String(),
	})
	if err != nil {
		t.Fatalf("listing pods on %s: %v", node, err)
	}
	var names []string
	for _, p := range list.Items {
		if _, mirror := p.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
			continue
		}
		if owner := metav1.GetControllerOf(&p); owner != nil && owner.Kind == "DaemonSet" {
			continue
		}
		names = append(names, p.Namespace+"/"+p.Name)
	}
	return names
}

// getNode reads a node.
func (l *live) getNode(ctx context.Context, t *testing.T, name string) *corev1.Node {
	t.Helper()
	n, err := l.k8s.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("getting node %s: %v", name, err)
	}
	return n
}

// cordoned reports whether a node is unschedulable with our taint.
func cordoned(n *corev1.Node) (unschedulable, tainted bool) {
	for _, tt := range n.Spec.Taints {
		if tt.Key == taintKey {
			tainted = true
		}
	}
	return n.Spec.Unschedulable, tainted
}

// watchCordon starts watching a node and returns a channel that receives
// the moment the watch first shows it unschedulable (for the cordon latency
// budget; a watch sees the change as soon as the API server commits it).
func (l *live) watchCordon(ctx context.Context, t *testing.T, name string) <-chan time.Time {
	t.Helper()
	n := l.getNode(ctx, t, name)
	w, err := l.k8s.Client.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{
		FieldSelector:   fields.OneTermEqualSelector("metadata.name", name).String(),
		ResourceVersion: n.ResourceVersion,
	})
	if err != nil {
		t.Fatalf("watching node %s: %v", name, err)
	}
	seen := make(chan time.Time, 1)
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			if n, ok := ev.Object.(*corev1.Node); ok && n.Spec.Unschedulable {
				seen <- time.Now()
				return
			}
		}
	}()
	return seen
}
