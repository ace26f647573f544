package e2e

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"

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

// live is one test's scene in local mode: the sandbox, the AWS fakes, and
// the real bootstrap (one runtime or more) acting on the sandbox through
// its kubeconfig, with EC2, Auto Scaling and EKS served by the fakes.
type live struct {
	rt    *lambdart.Runtime // the first runtime started
	aws   *awsfake.Server
	queue string // URL of the queue the batches come from
	k8s   *fixture.Env
	path  string   // the bootstrap
	env   []string // every runtime's environment

	mu      sync.Mutex
	records map[string]events.SQSMessage // the latest delivery by message id (batch)
}

// startLive starts the function in local mode; env entries override the
// defaults.
func startLive(t *testing.T, env ...string) *live {
	t.Helper()
	l := newLive(t)
	l.start(t, env...)
	return l
}

// newLive sets the scene up without starting the function, for tests that
// put something of their own between it and the fakes first.
func newLive(t *testing.T) *live {
	t.Helper()
	path := bootstrap(t) // skips under -short before the sandbox starts
	sb := sandbox.ForTest(t)
	fake := awsfake.New()
	t.Cleanup(fake.Close)
	env := []string{
		"DRAINPIPE_KUBECONFIG=" + sb.KubeconfigPath(),
		"DRAINPIPE_CLUSTERS=" + served,
		"AWS_REGION=" + awsfake.Region,
		"AWS_DEFAULT_REGION=" + awsfake.Region,
		// aws-sdk-go-v2's config.LoadDefaultConfig honours these natively.
		"AWS_ENDPOINT_URL=" + fake.URL(),
		"AWS_ENDPOINT_URL_EC2=" + fake.URL(),
		"AWS_ENDPOINT_URL_AUTO_SCALING=" + fake.URL(),
		"AWS_ENDPOINT_URL_EKS=" + fake.URL(),
		"AWS_ENDPOINT_URL_SQS=" + fake.URL(),
		"DRAINPIPE_LOG_LEVEL=debug",
	}
	env = append(env, fake.Env()...) // its credentials too: the fake verifies signatures
	queue := fake.AddQueue(queueAccount, queueName)
	return &live{aws: fake, queue: queue, k8s: fixture.New(t, sb.RESTConfig()), path: path, env: env, records: map[string]events.SQSMessage{}}
}

// start starts a runtime of the function (env entries override the
// defaults) and waits until it asks for work. Called again, it starts
// another execution environment beside the first, as Lambda does when it
// scales out; l.rt stays the first.
func (l *live) start(t *testing.T, env ...string) *lambdart.Runtime {
	t.Helper()
	opts := lambdart.Options{Bootstrap: l.path, Env: append(slices.Clone(l.env), env...), FunctionName: "drainpipe-e2e", Region: awsfake.Region}
	if testing.Verbose() {
		opts.Stdout = t.Output()
	}
	rt := lambdart.Start(t, opts)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if _, err := rt.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	if l.rt == nil {
		l.rt = rt
	}
	return rt
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
			Lifecycle:        "spot", // Spot warnings are checked against it
			Tags:             map[string]string{"eks:cluster-name": cluster},
			LaunchTime:       time.Now().Add(-time.Hour),
		})
	}
	return nodes
}

// invoke sends a batch of l's queue (batch) to the first runtime; see invokeOn.
func (l *live) invoke(ctx context.Context, t *testing.T, timeout time.Duration, msgs ...message) lambdart.Response {
	t.Helper()
	res, err := send(ctx, l.rt, l.batch(t, msgs...), timeout)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// invokeOn sends a batch to rt and returns once both its answer and its
// log lines are in; it fails the test on a harness or function error.
func invokeOn(ctx context.Context, t *testing.T, rt *lambdart.Runtime, timeout time.Duration, msgs ...message) lambdart.Response {
	t.Helper()
	res, err := send(ctx, rt, sqsBatch(t, msgs...), timeout)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// send is invokeOn for goroutines other than the test's: it reports
// failures as errors.
func send(ctx context.Context, rt *lambdart.Runtime, batch []byte, timeout time.Duration) (lambdart.Response, error) {
	res, err := rt.Invoke(ctx, batch, timeout)
	if err != nil {
		return res, err
	}
	if res.Error != nil {
		return res, fmt.Errorf("function error: %+v", *res.Error)
	}
	return res, settled(ctx, rt, res)
}

// podsOn lists the pods bound to node that a drain must remove: all but
// DaemonSet and mirror pods.
func (l *live) podsOn(ctx context.Context, t *testing.T, node string) []string {
	t.Helper()
	names, err := podsOnNode(ctx, l.k8s.Client, node)
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// podsOnNode is podsOn for goroutines other than the test's.
func podsOnNode(ctx context.Context, client kubernetes.Interface, node string) ([]string, error) {
	list, err := client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node).String(),
	})
	if err != nil {
		return nil, fmt.Errorf("listing pods on %s: %w", node, err)
	}
	names := []string{}
	for _, p := range list.Items {
		if _, mirror := p.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
			continue
		}
		if owner := metav1.GetControllerOf(&p); owner != nil && owner.Kind == "DaemonSet" {
			continue
		}
		names = append(names, p.Namespace+"/"+p.Name)
	}
	return names, nil
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

// pendingHook puts the node's instance into a pending terminate lifecycle
// action of the test group, as Auto Scaling would.
func (l *live) pendingHook(n *corev1.Node, token string) awsfake.LifecycleAction {
	hook := awsfake.LifecycleAction{ASG: "e2e-asg", Hook: "drain", Token: token, InstanceID: fixture.InstanceID(n)}
	l.aws.AddLifecycleAction(hook)
	return hook
}

// checkNode reports an error unless the node is cordoned (unschedulable
// with our taint) exactly when wantCordoned and holds wantPods pods.
func (l *live) checkNode(ctx context.Context, t *testing.T, node string, wantCordoned bool, wantPods int) {
	t.Helper()
	unschedulable, tainted := cordoned(l.getNode(ctx, t, node))
	if unschedulable != wantCordoned || tainted != wantCordoned {
		t.Errorf("node %s: unschedulable=%v tainted=%v, want %v", node, unschedulable, tainted, wantCordoned)
	}
	if got := l.podsOn(ctx, t, node); len(got) != wantPods {
		t.Errorf("pods on %s = %v, want %d", node, got, wantPods)
	}
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
