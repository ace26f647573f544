package sweep

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/instance"
	"github.com/drainpipe/drainpipe/internal/policy"
)

// The tests in this file check what a sweep decides and reports: dry runs
// (nothing written) over the fake clientset, and an EC2 and hooks of the
// sweep's own interfaces. What a repair writes is proven on the sandbox
// (holds_sandbox_test.go).

var sweepNow = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

// fakeEC2 answers a sweep's questions from maps; a set error fails its call.
type fakeEC2 struct {
	insts                                 map[string]instance.Instance
	events                                []instance.ScheduledEvent
	stopped                               map[string]instance.Instance
	describeErr, scheduledErr, stoppedErr error
	described                             [][]string
}

func (f *fakeEC2) Describe(_ context.Context, ids []string) (map[string]instance.Instance, error) {
	f.described = append(f.described, ids)
	if f.describeErr != nil {
		return nil, f.describeErr
	}
	out := map[string]instance.Instance{}
	for _, id := range ids {
		if in, ok := f.insts[id]; ok {
			out[id] = in
		}
	}
	return out, nil
}

func (f *fakeEC2) Scheduled(context.Context) ([]instance.ScheduledEvent, error) {
	return f.events, f.scheduledErr
}

func (f *fakeEC2) Stopped(context.Context) (map[string]instance.Instance, error) {
	return f.stopped, f.stoppedErr
}

// fakeHooks is a group's terminate action life, counting its reads.
type fakeHooks struct {
	life  time.Duration
	err   error
	reads int
	names [][]string // the hook names each read was limited to
}

func (f *fakeHooks) ActionLife(_ context.Context, _ string, names []string) (time.Duration, error) {
	f.reads++
	f.names = append(f.names, names)
	return f.life, f.err
}

// actorFunc is a function as the sweep's handler.Actor.
type actorFunc func(context.Context, handler.Task) handler.Result

func (f actorFunc) Act(ctx context.Context, t handler.Task) handler.Result { return f(ctx, t) }

// clusterClients serves one client per cluster; a missing one fails.
type clusterClients map[string]kubernetes.Interface

func (c clusterClients) Client(_ context.Context, cluster string) (kubernetes.Interface, error) {
	if cl, ok := c[cluster]; ok {
		return cl, nil
	}
	return nil, errors.New("no credentials")
}

// nodeByProvider finds an instance's node by its providerID's instance.
func nodeByProvider(ctx context.Context, client kubernetes.Interface, inst instance.Instance) (*corev1.Node, error) {
	list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for i := range list.Items {
		if instanceOf(&list.Items[i]) == inst.ID {
			return &list.Items[i], nil
		}
	}
	return nil, errors.New("no node")
}

// plainNode is a node of instance id that Drainpipe does not hold.
func plainNode(name, id string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{}},
		Spec: corev1.NodeSpec{ProviderID: "aws:///us-west-2a/" + id}}
}

// heldNode is a node of instance id held for kind since since.
func heldNode(name, id, kind string, since, deadline time.Time) *corev1.Node {
	n := plainNode(name, id)
	n.Labels = map[string]string{drain.LabelHeld: strings.TrimPrefix(drain.HeldSelector, drain.LabelHeld+"=")}
	n.Spec.Unschedulable = true
	n.Annotations = map[string]string{drain.AnnotationKind: kind, drain.AnnotationEventID: "ev-" + name,
		drain.AnnotationFirstSeen: since.Format(time.RFC3339), drain.AnnotationRestore: `{"unschedulable":true}`}
	if !deadline.IsZero() {
		n.Annotations[drain.AnnotationDeadline] = deadline.Format(time.RFC3339)
	}
	return n
}

func running(id, cluster string) instance.Instance {
	return instance.Instance{ID: id, State: "running", Cluster: cluster}
}

// newDrySweeper is a dry-run Sweeper of clusters "a" and "b" over ec2.
func newDrySweeper(t *testing.T, clients Clients, ec2 EC2, hooks Hooks, act func(context.Context, handler.Task) handler.Result) *Sweeper {
	t.Helper()
	if act == nil {
		act = func(context.Context, handler.Task) handler.Result {
			t.Error("the sweep acted on a task")
			return handler.Result{Status: handler.StatusIgnored}
		}
	}
	d := Deps{Clients: clients, EC2: ec2, Actor: actorFunc(act), NodeOf: nodeByProvider, Now: func() time.Time { return sweepNow }}
	if hooks != nil {
		d.Hooks = hooks
	}
	s, err := New(Config{Clusters: []string{"a", "b"}, DryRun: true, OutOfService: true, RebalanceHold: 30 * time.Minute,
		ScheduledAction: policy.ActionCordonAndDrain, Margin: DefaultMargin}, d)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func whats(rep Report) map[string]string {
	out := map[string]string{}
	for _, r := range rep.Repairs {
		out[r.Node] = r.What
	}
	for _, l := range rep.Left {
		if _, dup := out[l.Node]; dup {
			out[l.Node] = "repaired and left"
			continue
		}
		out[l.Node] = "left"
	}
	return out
}

const (
	idA = "i-0000000000000000a"
	idB = "i-0000000000000000b"
	idC = "i-0000000000000000c"
	idD = "i-0000000000000000d"
	idE = "i-0000000000000000e"
	idF = "i-0000000000000000f"
)

func TestDrySweepJudgesOnlyHeldNodesAndWritesNothing(t *testing.T) {
	hourAgo := sweepNow.Add(-time.Hour)
	client := fake.NewClientset(
		heldNode("spot-over", idA, "spot-interruption", hourAgo, hourAgo.Add(2*time.Minute)),
		heldNode("fresh", idB, "state-change", sweepNow.Add(-time.Minute), time.Time{}),
		plainNode("free", idC),
		heldNode("gone", idD, "state-change", hourAgo, time.Time{}),
	)
	ec2 := &fakeEC2{insts: map[string]instance.Instance{idA: running(idA, "a"), idB: running(idB, "a"),
		idC: running(idC, "a")}}
	s := newDrySweeper(t, clusterClients{"a": client}, ec2, nil, nil)
	rep := s.Sweep(t.Context())
	want := map[string]string{"spot-over": RepairGivenBack, "fresh": "left", "gone": "left"}
	if got := whats(rep); !mapsEqual(got, want) {
		t.Errorf("sweep = %v, want %v", got, want)
	}
	if rep.Checked != 3 {
		t.Errorf("Checked = %d, want the 3 held nodes", rep.Checked)
	}
	if !rep.DryRun || rep.Count(RepairGivenBack) != 1 || rep.Count(RepairOutOfService) != 0 {
		t.Errorf("report = %+v", rep)
	}
	// Cluster b has no client: reported, cluster a still swept.
	if len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0], "connecting to cluster b") {
		t.Errorf("errors = %q, want cluster b's connection only", rep.Errors)
	}
	// One DescribeInstances for the held nodes' instances, sorted, each once.
	if len(ec2.described) != 1 || strings.Join(ec2.described[0], ",") != idA+","+idB+","+idD {
		t.Errorf("described %v, want [[%s %s %s]]", ec2.described, idA, idB, idD)
	}
	n, err := client.CoreV1().Nodes().Get(t.Context(), "spot-over", metav1.GetOptions{})
	if err != nil || !n.Spec.Unschedulable || n.Annotations[drain.AnnotationKind] == "" {
		t.Errorf("a dry run changed the node: %v %+v", err, n)
	}
	for _, a := range client.Actions() {
		if v := a.GetVerb(); v != "list" && v != "get" {
			t.Errorf("a dry run wrote: %s %s", v, a.GetResource().Resource)
		}
	}
	if r := rep.Result(); r.Status != handler.StatusRetry || !strings.Contains(r.Reason, "dry run: sweep: 3 held nodes checked, 1 given back") {
		t.Errorf("result = %+v, want a retry (cluster b unreachable) counting the dry run", r)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestSweepWithNothingHeldDescribesNothing(t *testing.T) {
	ec2 := &fakeEC2{}
	s := newDrySweeper(t, clusterClients{"a": fake.NewClientset(plainNode("free", idA)), "b": fake.NewClientset()}, ec2, nil, nil)
	rep := s.Sweep(t.Context())
	if len(ec2.described) != 0 {
		t.Errorf("described %v with nothing held and no scheduled event", ec2.described)
	}
	if rep.Checked != 0 || len(rep.Repairs)+len(rep.Left)+len(rep.Errors) != 0 {
		t.Errorf("report = %+v, want empty", rep)
	}
	if r := rep.Result(); r.Status != handler.StatusDone {
		t.Errorf("result = %+v, want done", r)
	}
}

func TestSweepWithoutEC2sWordJudgesNothing(t *testing.T) {
	hourAgo := sweepNow.Add(-time.Hour)
	client := fake.NewClientset(heldNode("spot-over", idA, "spot-interruption", hourAgo, hourAgo))
	ec2 := &fakeEC2{describeErr: errors.New("throttled"), scheduledErr: errors.New("status unreadable")}
	s := newDrySweeper(t, clusterClients{"a": client, "b": fake.NewClientset()}, ec2, nil, nil)
	rep := s.Sweep(t.Context())
	if rep.Checked != 0 || len(rep.Repairs) != 0 {
		t.Errorf("judged without EC2: %+v", rep)
	}
	if len(rep.Errors) != 2 || rep.Errors[0] != "status unreadable" || !strings.HasPrefix(rep.Errors[1], "describing 1 instances: throttled") {
		t.Errorf("errors = %q", rep.Errors)
	}
}

func TestSweepReadsEachGroupsHooksOnce(t *testing.T) {
	tags := map[string]string{groupTag: "workers"}
	old := sweepNow.Add(-time.Hour) // an hour: past a 30-minute action and the margin, within 48 h
	client := fake.NewClientset(
		heldNode("t1", idA, "asg-lifecycle", old, time.Time{}),
		heldNode("t2", idB, "asg-lifecycle", old, time.Time{}),
		heldNode("untagged", idC, "asg-lifecycle", old, time.Time{}),
		heldNode("spot", idD, "spot-interruption", old, old),
	)
	insts := map[string]instance.Instance{}
	for _, id := range []string{idA, idB, idC, idD} {
		in := running(id, "a")
		if id != idC {
			in.Tags = tags
		}
		insts[id] = in
	}
	hooks := &fakeHooks{life: 30 * time.Minute}
	s := newDrySweeper(t, clusterClients{"a": client, "b": fake.NewClientset()}, &fakeEC2{insts: insts}, hooks, nil)
	rep := s.Sweep(t.Context())
	want := map[string]string{"t1": RepairGivenBack, "t2": RepairGivenBack, "untagged": "left", "spot": RepairGivenBack}
	if got := whats(rep); !mapsEqual(got, want) {
		t.Errorf("sweep = %v, want %v", got, want)
	}
	if hooks.reads != 1 {
		t.Errorf("hooks read %d times, want once for the one group (none for untagged or Spot)", hooks.reads)
	}
	for _, l := range rep.Left {
		if l.Node == "untagged" && !strings.Contains(l.Reason, "48h0m0s, no action outlives it; instance carries no "+groupTag) {
			t.Errorf("untagged left because %q, want the 48 h bound and why", l.Reason)
		}
	}
}

func TestActionLife(t *testing.T) {
	tagged := instance.Instance{ID: idA, Tags: map[string]string{groupTag: "workers"}}
	tests := []struct {
		name     string
		hooks    Hooks
		inst     instance.Instance
		wantD    time.Duration
		wantFrom string
	}{
		{"read", &fakeHooks{life: time.Hour}, tagged, time.Hour, "global timeout of workers's terminate hook"},
		{"unreadable", &fakeHooks{err: errors.New("denied")}, tagged, 48 * time.Hour, "no action outlives it; the hooks of workers unread"},
		{"not read", nil, tagged, 48 * time.Hour, "no action outlives it; hooks not read"},
		{"no group", &fakeHooks{life: time.Hour}, instance.Instance{ID: idA}, 48 * time.Hour,
			"no action outlives it; instance carries no " + groupTag + " tag"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newDrySweeper(t, clusterClients{}, &fakeEC2{}, tt.hooks, nil)
			known := map[string]life{}
			l := s.actionLife(t.Context(), tt.inst, known)
			if l.d != tt.wantD || l.from != tt.wantFrom {
				t.Errorf("life = %s from %q, want %s from %q", l.d, l.from, tt.wantD, tt.wantFrom)
			}
			if again := s.actionLife(t.Context(), tt.inst, known); again != l {
				t.Errorf("second read = %+v, want the first %+v", again, l)
			}
			if h, ok := tt.hooks.(*fakeHooks); ok && h.reads > 1 {
				t.Errorf("hooks read %d times for one group", h.reads)
			}
			// Every terminating hook of the group bounds the action, not
			// only those Drainpipe answers: another's longer timeout keeps
			// the instance going.
			if h, ok := tt.hooks.(*fakeHooks); ok && len(h.names) > 0 && h.names[0] != nil {
				t.Errorf("life read for hooks %v only, want every terminating hook of the group", h.names[0])
			}
		})
	}
}

func TestOrMax(t *testing.T) {
	for _, d := range []time.Duration{0, -time.Second} {
		if l := (life{d: d, from: "x"}).orMax(); l.d != 48*time.Hour {
			t.Errorf("orMax of %s = %s, want 48h", d, l.d)
		}
	}
	if l := (life{d: time.Nanosecond, from: "x"}).orMax(); l.d != time.Nanosecond || l.from != "x" {
		t.Errorf("orMax of 1ns = %+v, want it kept", l)
	}
}
