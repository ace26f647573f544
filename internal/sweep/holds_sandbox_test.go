package sweep

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/instance"
	"github.com/drainpipe/drainpipe/internal/lifecycle"
	"github.com/drainpipe/drainpipe/internal/nodemap"
	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/sandbox"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

func TestMain(m *testing.M) { sandbox.Main(m) }

type oneCluster struct{ client kubernetes.Interface }

func (c oneCluster) Client(context.Context, string) (kubernetes.Interface, error) {
	return c.client, nil
}

// ignoring is an actor that acts on nothing.
type ignoring struct{}

func (ignoring) Act(context.Context, handler.Task) handler.Result {
	return handler.Result{Status: handler.StatusIgnored}
}

// holdScene is one held node on the sandbox, its instance in the EC2 and
// Auto Scaling wire fakes, and a sweep whose clock the test sets.
type holdScene struct {
	env  *fixture.Env
	aws  *awsfake.Server
	node *corev1.Node
	id   string
	now  time.Time
	sw   *Sweeper
}

const (
	testCluster = "prod"
	testGroup   = "eks-prod-workers"
)

func newHoldScene(t *testing.T, tags map[string]string) *holdScene {
	t.Helper()
	sb := sandbox.ForTest(t)
	t.Parallel()
	s := &holdScene{env: fixture.New(t, sb.RESTConfig()), aws: awsfake.New()}
	t.Cleanup(s.aws.Close)
	ctx := t.Context()
	s.node = s.env.Node(ctx, fixture.NodeOptions{Region: awsfake.Region})
	s.id = fixture.InstanceID(s.node)
	all := map[string]string{"eks:cluster-name": testCluster}
	for k, v := range tags {
		all[k] = v
	}
	s.aws.AddInstances(awsfake.Instance{ID: s.id, PrivateDNSName: s.node.Name,
		AvailabilityZone: s.node.Labels[corev1.LabelTopologyZone], Tags: all, LaunchTime: time.Now().Add(-time.Hour)})
	router, err := instance.NewRouter([]string{testCluster}, "")
	if err != nil {
		t.Fatal(err)
	}
	cfg := s.aws.Config()
	sw, err := New(Config{Clusters: []string{testCluster}, OutOfService: true, RebalanceHold: 30 * time.Minute,
		Margin: DefaultMargin}, Deps{
		Clients: oneCluster{s.env.Client}, EC2: instance.NewLookup(ec2.NewFromConfig(cfg), router),
		Actor:  ignoring{},
		NodeOf: nodemap.Node, Hooks: lifecycle.New(autoscaling.NewFromConfig(cfg)),
		Log: slog.New(slog.DiscardHandler), Now: func() time.Time { return s.now }})
	if err != nil {
		t.Fatal(err)
	}
	s.sw = sw
	return s
}

// hold cordons the node as the pipeline does for req (the real cordon
// writes every mark).
func (s *holdScene) hold(t *testing.T, req drain.Request) {
	t.Helper()
	req.Node = s.node.Name
	if _, err := drain.New(s.env.Client, drain.DefaultConfig(), nil).Run(t.Context(), req); err != nil {
		t.Fatal(err)
	}
}

// sweep runs one sweep at now and returns what it did to this node:
// a Repair kind, or "" with the reason it was left.
func (s *holdScene) sweep(t *testing.T, at time.Time) (string, string) {
	t.Helper()
	s.now = at
	rep := s.sw.Sweep(t.Context())
	for _, r := range rep.Repairs {
		if r.Node == s.node.Name {
			return r.What, r.Reason
		}
	}
	for _, l := range rep.Left {
		if l.Node == s.node.Name {
			return "", l.Reason
		}
	}
	t.Fatalf("sweep at %s did not judge node %s: %+v", at, s.node.Name, rep)
	return "", ""
}

func (s *holdScene) marks(t *testing.T) drain.Marks {
	t.Helper()
	n, err := s.env.Client.CoreV1().Nodes().Get(t.Context(), s.node.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return drain.ReadMarks(n)
}

// holdRow is one row of docs/sweep.md's hold table: a hold Drainpipe
// makes, the sweep just before its end (still held) and just after (the
// repair the row names).
type holdRow struct {
	kind   string // drainpipe.dev/kind; "" for an out-of-service taint alone
	name   string
	tags   map[string]string
	setup  func(t *testing.T, s *holdScene, t0 time.Time)
	before func(t *testing.T, s *holdScene, t0 time.Time) time.Time // still held then
	after  func(t *testing.T, s *holdScene, t0 time.Time) time.Time // repaired then
	repair string
}

func at(d time.Duration) func(*testing.T, *holdScene, time.Time) time.Time {
	return func(_ *testing.T, _ *holdScene, t0 time.Time) time.Time { return t0.Add(d) }
}

// holdRows are the hold table's rows, each with its end condition; the
// margin is DefaultMargin (10 minutes).
func holdRows() []holdRow {
	const margin = DefaultMargin
	stopped := func(state string) func(*testing.T, *holdScene, time.Time) time.Time {
		return func(t *testing.T, s *holdScene, t0 time.Time) time.Time {
			s.aws.SetInstanceState(s.id, state)
			return t0.Add(time.Hour)
		}
	}
	return []holdRow{
		{kind: "spot-interruption", name: "until the deadline plus the margin",
			setup: func(t *testing.T, s *holdScene, t0 time.Time) {
				s.hold(t, drain.Request{Kind: "spot-interruption", EventID: "spot-1", Deadline: t0.Add(2 * time.Minute), EventTime: t0})
			},
			before: at(2*time.Minute + margin - time.Minute), after: at(2*time.Minute + margin + time.Minute), repair: RepairGivenBack},
		{kind: "capacity-reservation-interruption", name: "until the deadline plus the margin",
			setup: func(t *testing.T, s *holdScene, t0 time.Time) {
				s.hold(t, drain.Request{Kind: "capacity-reservation-interruption", EventID: "cr-1", Deadline: t0.Add(2 * time.Minute), EventTime: t0})
			},
			before: at(2*time.Minute + margin - time.Minute), after: at(2*time.Minute + margin + time.Minute), repair: RepairGivenBack},
		// The warning comes 40 minutes before the block's end; the
		// terminations begin 30 minutes before it. Between end − 20 min
		// (terminations + margin) and the end EC2 is still certain to
		// terminate the instance.
		{kind: "capacity-block-expiry", name: "until the block's end plus the margin",
			setup: func(t *testing.T, s *holdScene, t0 time.Time) {
				end := t0.Add(40 * time.Minute)
				s.hold(t, drain.Request{Kind: "capacity-block-expiry", EventID: "cb-1", Deadline: end.Add(-event.BlockTerminationLead),
					End: end, EventTime: t0})
			},
			before: at(40*time.Minute - 5*time.Minute), after: at(40*time.Minute + margin + time.Minute), repair: RepairGivenBack},
		// A Health notice whose code DescribeInstanceStatus lists no
		// event for: its window, not its start, ends it.
		{kind: "scheduled-change", name: "until the Health window's end plus the margin",
			setup: func(t *testing.T, s *holdScene, t0 time.Time) {
				s.hold(t, drain.Request{Kind: "scheduled-change", EventID: "arn:aws:health:us-west-2::event/EC2/X/1",
					Deadline: t0.Add(time.Hour), End: t0.Add(3 * time.Hour), EventTime: t0})
			},
			before: at(time.Hour + margin + 30*time.Minute), after: at(3*time.Hour + margin + time.Minute), repair: RepairGivenBack},
		{kind: "rebalance-recommendation", name: "until DRAINPIPE_REBALANCE_HOLD plus the margin",
			setup: func(t *testing.T, s *holdScene, t0 time.Time) {
				s.hold(t, drain.Request{Kind: "rebalance-recommendation", EventID: "rb-1", EventTime: t0})
			},
			before: at(30*time.Minute + margin - time.Minute), after: at(30*time.Minute + margin + time.Minute), repair: RepairGivenBack},
		{kind: "state-change", name: "while the instance is stopped; given back once it runs",
			setup: func(t *testing.T, s *holdScene, t0 time.Time) {
				s.aws.SetInstanceState(s.id, "stopped")
				s.hold(t, drain.Request{Kind: "state-change", EventID: "sc-1", EventTime: t0})
				if _, err := drain.MarkOutOfService(t.Context(), s.env.Client, s.node.Name, t0); err != nil {
					t.Fatal(err)
				}
			},
			before: stopped("stopped"), after: stopped("running"), repair: RepairGivenBack},
		// A terminate hook with a 60 s heartbeat timeout: no action of
		// it outlives 100 minutes.
		{kind: "asg-lifecycle", name: "until the hook's global timeout plus the margin", tags: map[string]string{groupTag: testGroup},
			setup: func(t *testing.T, s *holdScene, t0 time.Time) {
				s.aws.AddLifecycleHook(awsfake.LifecycleHook{ASG: testGroup, Name: "drainpipe", HeartbeatTimeout: time.Minute})
				s.aws.AddLifecycleHook(awsfake.LifecycleHook{ASG: testGroup, Name: "drainpipe-launch",
					Transition: event.TransitionLaunching, HeartbeatTimeout: time.Hour})
				s.hold(t, drain.Request{Kind: "asg-lifecycle", EventID: "lc-1", EventTime: t0.Add(-time.Minute)})
			},
			before: at(100*time.Minute + margin - time.Minute), after: at(100*time.Minute + margin + time.Minute), repair: RepairGivenBack},
		{kind: "asg-lifecycle", name: "hooks unreadable: until 48 h plus the margin",
			setup: func(t *testing.T, s *holdScene, t0 time.Time) {
				s.hold(t, drain.Request{Kind: "asg-lifecycle", EventID: "lc-2", EventTime: t0})
			},
			before: at(48*time.Hour + margin - time.Minute), after: at(48*time.Hour + margin + time.Minute), repair: RepairGivenBack},
		// The sweep's own hold: a stopped instance's node no notice
		// reached, tainted out of service, until the instance runs.
		{kind: "", name: "out of service by the sweep: while the instance is stopped",
			setup: func(t *testing.T, s *holdScene, t0 time.Time) {
				s.aws.SetInstanceState(s.id, "stopped")
				if what, why := s.sweep(t, t0); what != RepairOutOfService {
					t.Fatalf("sweep of a stopped instance's node: %q (%s), want it tainted out of service", what, why)
				}
			},
			before: stopped("stopped"), after: stopped("running"), repair: RepairGivenBack},
	}
}

// Every hold Drainpipe makes ends: each row of the hold table is swept
// just before its end (left, with a reason) and just after (given back,
// the node as Drainpipe found it).
func TestHoldTable(t *testing.T) {
	for _, row := range holdRows() {
		t.Run(row.kind+": "+row.name, func(t *testing.T) {
			s := newHoldScene(t, row.tags)
			t0 := time.Now().UTC().Truncate(time.Second)
			row.setup(t, s, t0)
			if what, why := s.sweep(t, row.before(t, s, t0)); what != "" {
				t.Errorf("before its end: %q (%s), want the node left held", what, why)
			}
			if m := s.marks(t); !m.Held() {
				t.Fatalf("before its end: %+v, want held", m)
			}
			if what, why := s.sweep(t, row.after(t, s, t0)); what != row.repair {
				t.Errorf("after its end: %q (%s), want %s", what, why, row.repair)
			}
			if m := s.marks(t); m.Held() {
				t.Errorf("after its end: %+v, want given back", m)
			}
		})
	}
}

// A hold kind in the code without a row in the hold table (here and in
// docs/sweep.md) is a hold nobody said how it ends.
func TestHoldTableCoversEveryKind(t *testing.T) {
	rows := map[string]bool{}
	for _, r := range holdRows() {
		rows[r.kind] = true
	}
	doc, err := os.ReadFile("../../docs/sweep.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(doc), "## When a hold ends")
	if !ok {
		t.Fatal(`docs/sweep.md has no "## When a hold ends" section`)
	}
	table, _, _ = strings.Cut(table, "\n## ")
	kinds := []string{""}
	for _, k := range event.Kinds() {
		kinds = append(kinds, string(k))
	}
	for _, k := range kinds {
		if !rows[k] {
			t.Errorf("hold kind %q has no row in holdRows", k)
		}
		if k != "" && !strings.Contains(table, "`"+k+"`") {
			t.Errorf("hold kind %q has no row in docs/sweep.md's hold table", k)
		}
	}
	if !strings.Contains(table, "out of service") {
		t.Error("docs/sweep.md's hold table has no row for the sweep's own out-of-service hold")
	}
}
