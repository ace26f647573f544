package restore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/hold"
	"github.com/drainpipe/drainpipe/internal/instance"
	"github.com/drainpipe/drainpipe/internal/lifecycle"
	"github.com/drainpipe/drainpipe/internal/nodemap"
)

// These tests decide return to service over the fake clientset: what a
// give-back leaves on a node is the drain package's, proved against the
// sandbox's API server there; here only which holds a restore asks to
// end, and what it reports, are at stake.

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// heldNode is a node Drainpipe cordoned and tainted for holds, as its
// cordon leaves it.
func heldNode(name string, holds ...hold.Hold) *corev1.Node {
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: "1",
			Labels:      map[string]string{drain.LabelHeld: "true"},
			Annotations: map[string]string{drain.AnnotationRestore: `{"unschedulable":true}`}},
		Spec: corev1.NodeSpec{Unschedulable: true,
			Taints: []corev1.Taint{{Key: drain.TaintKey, Effect: corev1.TaintEffectNoSchedule}}},
	}
	set := hold.Set(holds)
	if h, ok := set.Newest(); ok {
		n.Annotations[drain.AnnotationHolds] = set.Encode()
		n.Annotations[drain.AnnotationKind] = h.Kind
		n.Annotations[drain.AnnotationEventID] = h.ID
		n.Annotations[drain.AnnotationThreatTime] = h.Time
		n.Annotations[drain.AnnotationFirstSeen] = set[0].Since
	}
	return n
}

// held is a hold of kind and id taken at t0 for a threat announced at.
func held(kind, id string, at time.Time) hold.Hold {
	return hold.Hold{Kind: kind, ID: id, Time: hold.Precise(at), Since: hold.Stamp(t0)}
}

// ready sets the node's Ready condition, after another condition.
func ready(n *corev1.Node, status corev1.ConditionStatus) *corev1.Node {
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse},
		{Type: corev1.NodeReady, Status: status}}
	return n
}

// marks reads the node back from the client.
func marks(t *testing.T, client kubernetes.Interface, name string) (drain.Marks, *corev1.Node) {
	t.Helper()
	n, err := client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return drain.ReadMarks(n), n
}

// refusePatches makes every node patch fail with a server error.
func refusePatches(client *fake.Clientset) {
	client.PrependReactor("patch", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("patch refused")
	})
}

type lookups map[string]instance.Instance

func (l lookups) Get(_ context.Context, id string) (instance.Instance, bool, error) {
	if i, ok := l[id]; ok {
		return i, true, nil
	}
	return instance.Instance{}, false, nil
}

type failedLookups struct{ err error }

func (f failedLookups) Get(context.Context, string) (instance.Instance, bool, error) {
	return instance.Instance{}, false, f.err
}

// clusters knows one cluster, "c1".
type clusters struct {
	client kubernetes.Interface
	err    error
}

func (c clusters) Client(_ context.Context, name string) (kubernetes.Interface, error) {
	if c.err != nil || name != "c1" {
		return nil, fmt.Errorf("cluster %s: %w", name, errors.Join(c.err, errors.New("unknown")))
	}
	return c.client, nil
}

// findByDNS names the node after the instance's private DNS name.
func findByDNS(_ context.Context, _ kubernetes.Interface, inst instance.Instance) (string, error) {
	if inst.PrivateDNSName == "" {
		return "", fmt.Errorf("instance %s: %w", inst.ID, nodemap.ErrNotFound)
	}
	return inst.PrivateDNSName, nil
}

// clock stands still; its ticker ticks when the test says, and a wait
// for a tick the test did not give ends the budget (spent), so a launch
// never waits for ever.
type clock struct {
	ticks chan time.Time
	spent func()
}

func (c clock) Now() time.Time                           { return t0 }
func (c clock) NewTicker(time.Duration) lifecycle.Ticker { return ticker(c) }

type ticker clock

func (t ticker) C() <-chan time.Time {
	if len(t.ticks) == 0 {
		t.spent()
	}
	return t.ticks
}
func (t ticker) Stop() {}

// fixture is a Restorer over one cluster, c1, whose client is the fake
// clientset holding nodes, and an instance i-1 running node n1 in it.
type fixture struct {
	r      *Restorer
	client *fake.Clientset
	inst   instance.Instance
	logs   *bytes.Buffer
	log    *slog.Logger
	spent  bool // the invocation's budget is spent before a launch waits
	// endBudget ends the budget of the launch waiting.
	endBudget context.CancelFunc
}

func newFixture(t *testing.T, cfg Config, nodes ...runtime.Object) *fixture {
	t.Helper()
	f := &fixture{client: fake.NewClientset(nodes...), logs: &bytes.Buffer{},
		inst: instance.Instance{ID: "i-1", State: "running", PrivateDNSName: "n1", Cluster: "c1"}}
	f.log = slog.New(slog.NewJSONHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if cfg.MaxReceiveCount == 0 {
		cfg.MaxReceiveCount = 5
	}
	r, err := New(cfg, Deps{Lookups: lookups{"i-1": f.inst}, Clusters: clusters{client: f.client}, Find: findByDNS,
		WhyIgnored: func(inst instance.Instance) string { return "no cluster tag on " + inst.ID },
		Budget: func(ctx context.Context) (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(ctx)
			if f.spent {
				cancel()
			}
			f.endBudget = cancel
			return ctx, cancel
		},
		Clock: clock{ticks: make(chan time.Time, 1), spent: func() { f.endBudget() }}})
	if err != nil {
		t.Fatal(err)
	}
	f.r = r
	return f
}

// setInstance changes what EC2 reports of i-1.
func (f *fixture) setInstance(mod func(*instance.Instance)) {
	mod(&f.inst)
	f.r.Lookups = lookups{"i-1": f.inst}
}

// tick lets a waiting launch read its node once more.
func (f *fixture) tick() { f.r.Clock.(clock).ticks <- t0 }

// replace puts node in place of the one of its name.
func (f *fixture) replace(t *testing.T, node *corev1.Node) {
	t.Helper()
	ctx := context.Background()
	if err := f.client.CoreV1().Nodes().Delete(ctx, node.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
