package pipeline

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/instance"
	"github.com/drainpipe/drainpipe/internal/nodemap"
	"github.com/drainpipe/drainpipe/internal/policy"
	"github.com/drainpipe/drainpipe/test/sandbox"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

func TestMain(m *testing.M) { sandbox.Main(m) }

type realClusters struct{ client kubernetes.Interface }

func (r realClusters) Client(context.Context, string) (kubernetes.Interface, error) {
	return r.client, nil
}

// liveScene is the pipeline with the real drainer and node finder on the
// sandbox; EC2 is a fake answering with one Spot instance per node.
type liveScene struct {
	env   *fixture.Env
	actor *Actor
	clock *fakeClock
	ec2   *fakeInstances
	sent  *fixture.RequestLog // the actor's requests to the API server
}

func newLiveScene(t *testing.T, cfg Config) *liveScene {
	t.Helper()
	return newLiveSceneWith(t, cfg, func(*Deps) {})
}

// newLiveSceneWith is newLiveScene with its actor's Deps changed by mod.
func newLiveSceneWith(t *testing.T, cfg Config, mod func(*Deps)) *liveScene {
	t.Helper()
	sb := sandbox.ForTest(t)
	t.Parallel()
	env := fixture.New(t, sb.RESTConfig())
	s := &liveScene{env: env, clock: &fakeClock{now: time.Now()}, ec2: &fakeInstances{known: map[string]instance.Instance{}},
		sent: &fixture.RequestLog{}}
	client, err := kubernetes.NewForConfig(s.sent.Wrap(sb.RESTConfig()))
	if err != nil {
		t.Fatal(err)
	}
	d := Deps{
		Instances: s.ec2, Clusters: realClusters{client}, FindNode: nodemap.Find, NodeOf: nodemap.Node,
		NewDrainer: func(c kubernetes.Interface) Drainer { return drain.New(c, drain.DefaultConfig(), nil) },
		Hooks:      &fakeHooks{}, Clock: s.clock, Log: slog.New(slog.DiscardHandler),
	}
	mod(&d)
	a, err := New(cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	s.actor = a
	return s
}

// node adds a node and its running Spot instance.
func (s *liveScene) node(ctx context.Context, opts fixture.NodeOptions) (*corev1.Node, string) {
	n := s.env.Node(ctx, opts)
	id := fixture.InstanceID(n)
	s.ec2.mu.Lock()
	s.ec2.known[id] = instance.Instance{ID: id, State: "running", PrivateDNSName: n.Name, Cluster: "prod",
		AvailabilityZone: n.Labels["topology.kubernetes.io/zone"], Lifecycle: "spot", LaunchTime: time.Now().Add(-time.Hour)}
	s.ec2.mu.Unlock()
	return n, id
}

func (s *liveScene) get(ctx context.Context, t *testing.T, name string) drain.Marks {
	t.Helper()
	n, err := s.env.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m := drain.ReadMarks(n)
	m.Cordoned = n.Spec.Unschedulable // here: unschedulable by anyone
	return m
}

func act(t *testing.T, ctx context.Context, s *liveScene, id string, a policy.Action, rc int, in event.Interruption) handler.Result {
	t.Helper()
	in.Instances = []string{id}
	return s.actor.Act(ctx, handler.Task{InstanceID: id, Action: a, ReceiveCount: rc, Interruptions: []event.Interruption{in}})
}

// A Health notice drains its nodes; its closing gives back the nodes held
// for it and no other.
func TestHealthClosedGivesBack(t *testing.T) {
	s := newLiveScene(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n, id := s.node(ctx, fixture.NodeOptions{})
	open := event.Interruption{Kind: event.KindScheduledChange, EventID: "arn:aws:health:eu-west-1::event/EC2/A/1",
		Time: s.clock.Now(), Deadline: s.clock.Now().Add(24 * time.Hour)}
	if r := act(t, ctx, s, id, policy.ActionCordonAndDrain, 1, open); r.Status != handler.StatusDone {
		t.Fatalf("open notice: %+v", r)
	}
	other := open
	other.EventID, other.Restore, other.Deadline = "arn:aws:health:eu-west-1::event/EC2/B/2", true, time.Time{}
	if r := act(t, ctx, s, id, policy.ActionNone, 1, other); r.Status != handler.StatusIgnored || !strings.Contains(r.Reason, "held for event") {
		t.Errorf("another notice closed: %+v, want the node left", r)
	}
	closed := open // AWS closes a notice after it opened it
	closed.Restore, closed.Deadline, closed.Time = true, time.Time{}, open.Time.Add(time.Hour)
	if r := act(t, ctx, s, id, policy.ActionNone, 1, closed); r.Status != handler.StatusDone || !strings.Contains(r.Reason, "gave node") {
		t.Errorf("notice closed: %+v, want the node given back", r)
	}
	if m := s.get(ctx, t, n.Name); m.Cordoned || m.Held() {
		t.Errorf("after the closed notice: %+v", m)
	}
}

// A rebalance cordon is held (the message asked back at the end of the
// hold), then given back when it comes back after the hold; one an
// interruption overtook stays.
func TestRebalanceHold(t *testing.T) {
	s := newLiveScene(t, Config{RebalanceHold: 30 * time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	quiet, quietID := s.node(ctx, fixture.NodeOptions{})
	busy, busyID := s.node(ctx, fixture.NodeOptions{})
	rb := event.Interruption{Kind: event.KindRebalanceRecommendation, EventID: "rb-1", Time: s.clock.Now()}
	for _, id := range []string{quietID, busyID} {
		r := act(t, ctx, s, id, policy.ActionCordon, 1, rb)
		if r.Status != handler.StatusRetry || r.HoldFor <= 29*time.Minute || r.HoldFor > 30*time.Minute {
			t.Fatalf("first delivery: %+v, want a retry held about 30m", r)
		}
	}
	if m := s.get(ctx, t, quiet.Name); !m.Cordoned || m.Kind != "rebalance-recommendation" {
		t.Fatalf("held node: %+v, want cordoned for the recommendation", m)
	}
	// A spot interruption warning for the busy node follows.
	spotIn := spot(s.clock.Now())
	spotIn.Deadline = s.clock.Now().Add(time.Hour)
	if r := act(t, ctx, s, busyID, policy.ActionCordon, 1, spotIn); r.Status != handler.StatusDone {
		t.Fatalf("spot warning: %+v", r)
	}

	s.clock.advance(31 * time.Minute)
	if r := act(t, ctx, s, quietID, policy.ActionCordon, 2, rb); r.Status != handler.StatusDone || !strings.Contains(r.Reason, "gave node") {
		t.Errorf("quiet node after the hold: %+v, want given back", r)
	}
	if m := s.get(ctx, t, quiet.Name); m.Cordoned || m.Held() {
		t.Errorf("quiet node after the hold: %+v", m)
	}
	if r := act(t, ctx, s, busyID, policy.ActionCordon, 2, rb); r.Status != handler.StatusDone || !strings.Contains(r.Reason, "now held for spot-interruption") {
		t.Errorf("busy node after the hold: %+v, want done, left to the interruption", r)
	}
	if m := s.get(ctx, t, busy.Name); !m.Cordoned || m.Kind != "spot-interruption" {
		t.Errorf("busy node: %+v, want still cordoned for the spot interruption", m)
	}
}

// A first-seen mark written on a clock ahead of ours (another environment,
// or a second boundary crossed since we read ours) never holds a
// rebalance cordon longer than DRAINPIPE_REBALANCE_HOLD from now.
func TestRebalanceHoldMarkAhead(t *testing.T) {
	s := newLiveScene(t, Config{RebalanceHold: 30 * time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ahead := s.clock.Now().Add(5 * time.Second).UTC().Format(time.RFC3339)
	_, id := s.node(ctx, fixture.NodeOptions{Annotations: map[string]string{drain.AnnotationFirstSeen: ahead}})
	rb := event.Interruption{Kind: event.KindRebalanceRecommendation, EventID: "rb-ahead", Time: s.clock.Now()}
	if r := act(t, ctx, s, id, policy.ActionCordon, 1, rb); r.Status != handler.StatusRetry || r.HoldFor != 30*time.Minute {
		t.Fatalf("mark 5s ahead: %+v, want a retry held exactly 30m", r)
	}
}

// Karpenter's nodes are handled by default and left to Karpenter with
// SkipKarpenter; a running state change never gives back a node Karpenter
// is disrupting, and its taint stays.
func TestKarpenterNodes(t *testing.T) {
	labels := map[string]string{drain.KarpenterNodePoolLabel: "default"}
	t.Run("handled by default", func(t *testing.T) {
		s := newLiveScene(t, Config{})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		n, id := s.node(ctx, fixture.NodeOptions{Labels: labels})
		if r := act(t, ctx, s, id, policy.ActionCordon, 1, spot(s.clock.Now())); r.Status != handler.StatusDone {
			t.Fatalf("spot warning: %+v", r)
		}
		node, err := s.env.Client.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		node.Spec.Taints = append(node.Spec.Taints, corev1.Taint{Key: drain.KarpenterDisruptedTaint, Effect: corev1.TaintEffectNoSchedule})
		if _, err := s.env.Client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		running := event.Interruption{Kind: event.KindStateChange, EventID: "sc-run", Time: s.clock.Now().Add(time.Second),
			State: "running", Restore: true}
		if r := act(t, ctx, s, id, policy.ActionNone, 1, running); r.Status != handler.StatusIgnored || !strings.Contains(r.Reason, "Karpenter") {
			t.Errorf("running: %+v, want the Karpenter-disrupted node left", r)
		}
		if m := s.get(ctx, t, n.Name); !m.Cordoned || !m.Karpenter {
			t.Errorf("node after running: %+v, want still cordoned with Karpenter's taint", m)
		}
	})
	t.Run("skipped", func(t *testing.T) {
		s := newLiveScene(t, Config{SkipKarpenter: true})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		n, id := s.node(ctx, fixture.NodeOptions{Labels: labels})
		r := act(t, ctx, s, id, policy.ActionCordonAndDrain, 1, spot(s.clock.Now()))
		if r.Status != handler.StatusIgnored || !strings.Contains(r.Reason, "DRAINPIPE_KARPENTER_NODES=skip") {
			t.Errorf("spot warning: %+v, want ignored for Karpenter", r)
		}
		if m := s.get(ctx, t, n.Name); m.Cordoned || m.Held() {
			t.Errorf("skipped node touched: %+v", m)
		}
	})
}
