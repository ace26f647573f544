package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"pgregory.net/rapid"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/instance"
	"github.com/drainpipe/drainpipe/internal/lifecycle"
	"github.com/drainpipe/drainpipe/internal/policy"
	"github.com/drainpipe/drainpipe/internal/sweep"
)

// TestHoldsModel drives the real pipeline and drainer over one node with
// random sequences of what AWS sends for one instance — Spot warnings, AWS
// Health retirements and their closing, stops and starts, scale-ins to a
// Running warm pool and launches out of it — delivered in any order, with
// duplicates and redrives of anything already delivered, and the cordon
// queue's copy of any notice sent, before or after its own. A model of EC2
// and Auto Scaling says which threats stand. Whenever every notice sent
// has been delivered, the node must be held for every threat that stands
// (never early), and, unless a threat's notice came after the notice that
// ended it (only the sweep can tell then), be fully back in service when
// none stands (never late). The sweep, run past every threat's bound and
// margin, gives back what such a late notice left: then too the node must
// be back once nothing stands.
func TestHoldsModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		m := newHoldsModel(rt)
		rt.Repeat(map[string]func(*rapid.T){
			"spot":      m.spot,
			"retire":    m.retire,
			"close":     m.closeRetirement,
			"stop":      m.stop,
			"start":     m.start,
			"scaleIn":   m.scaleIn,
			"launch":    m.launch,
			"deliver":   m.deliver,
			"duplicate": m.duplicate,
			"copy":      m.cordonCopy,
			"sweep":     m.sweepLater,
			"":          m.check,
		})
	})
}

// modelNotice is a notice sent, with what delivering it means for the model.
type modelNotice struct {
	in   event.Interruption
	name string
	// threat is the threat the notice announces; ends, the threats it
	// ends (a restore).
	threat string
	ends   []string
}

type holdsModel struct {
	rt       *rapid.T
	r        *rig
	client   kubernetes.Interface
	hooks    *modelHooks
	ec2      *fakeInstances
	now      time.Time
	seq      int
	state    string          // EC2's: running or stopped
	standing map[string]bool // the threats that stand, by name
	ended    map[string]bool // the threats ended (their end was sent)
	endSeen  map[string]bool // the threats whose ending notice was delivered
	pending  []modelNotice
	sent     []modelNotice // delivered at least once
	inPool   bool
	sweeper  *sweep.Sweeper
	retireAt map[string]time.Time // each retirement's start, as EC2 lists it
	action   string               // the active terminate action's token, or the pooled instance's
	lag      []string
}

func newHoldsModel(rt *rapid.T) *holdsModel {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName},
		Spec:   corev1.NodeSpec{ProviderID: "aws:///eu-west-1a/" + instID},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	client := fake.NewClientset(node)
	hooks := &modelHooks{completed: map[string]bool{}}
	m := &holdsModel{rt: rt, client: client, hooks: hooks, now: t0, state: "running",
		standing: map[string]bool{}, ended: map[string]bool{}, endSeen: map[string]bool{}, retireAt: map[string]time.Time{}}
	clock := &fakeClock{now: t0}
	logs := &syncWriter{w: &bytes.Buffer{}}
	m.ec2 = &fakeInstances{known: map[string]instance.Instance{instID: ourInstance()}}
	a, err := New(Config{OutOfService: true, LaunchPoll: time.Millisecond}, Deps{
		Instances: m.ec2,
		Clusters:  fakeClusters{client: client}, FindNode: finder(map[string]string{instID: nodeName}, nil),
		NewDrainer: func(k kubernetes.Interface) Drainer {
			return drain.New(k, drain.DefaultConfig(), slog.New(slog.NewJSONHandler(logs, nil)))
		},
		Hooks: hooks, Recorder: NopRecorder{}, Clock: clock,
		NodeOf: func(ctx context.Context, k kubernetes.Interface, _ instance.Instance) (*corev1.Node, error) {
			return k.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		},
		Log: slog.New(slog.NewJSONHandler(logs, nil)),
	})
	if err != nil {
		rt.Fatalf("New: %v", err)
	}
	m.r = &rig{actor: a, clock: clock}
	m.sweeper, err = sweep.New(sweep.Config{Clusters: []string{"prod"}, OutOfService: true, Margin: sweep.DefaultMargin},
		sweep.Deps{Clients: fakeClusters{client: client}, EC2: modelEC2{m}, Actor: a,
			NodeOf: func(ctx context.Context, k kubernetes.Interface, _ instance.Instance) (*corev1.Node, error) {
				return k.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
			},
			Hooks: modelLife{}, Now: clock.Now})
	if err != nil {
		rt.Fatalf("sweep.New: %v", err)
	}
	return m
}

func (m *holdsModel) send(n modelNotice) {
	m.seq++
	m.now = m.now.Add(time.Second)
	n.in.Instances, n.in.Time = []string{instID}, m.now
	m.pending = append(m.pending, n)
}

func (m *holdsModel) id(prefix string) string { return fmt.Sprintf("%s-%d", prefix, m.seq) }

func (m *holdsModel) spot(rt *rapid.T) {
	if m.state != "running" || m.inPool || m.action != "" {
		rt.Skip("Spot warns a running instance in service")
	}
	name := m.id("spot")
	m.standing[name] = true
	m.send(modelNotice{name: name, threat: name, in: event.Interruption{Kind: event.KindSpotInterruption,
		EventID: name, Deadline: m.now.Add(time.Hour)}})
}

func (m *holdsModel) retire(rt *rapid.T) {
	if m.state != "running" {
		rt.Skip("a retirement is scheduled for a running instance")
	}
	name := "arn:aws:health:eu-west-1::event/EC2/" + m.id("retire")
	m.standing[name] = true
	// Retirements a day apart: EC2 and AWS Health name one event by its
	// code and start.
	start := m.now.Add(time.Duration(24*(2+len(m.retireAt))) * time.Hour).Truncate(time.Second)
	m.retireAt[name] = start
	m.send(modelNotice{name: name, threat: name, in: event.Interruption{Kind: event.KindScheduledChange,
		EventID: name, Deadline: start, End: start.Add(24 * time.Hour), ScheduledCode: "instance-retirement"}})
}

func (m *holdsModel) closeRetirement(rt *rapid.T) {
	var open []string
	for name := range m.standing {
		if strings.Contains(name, "retire") {
			open = append(open, name)
		}
	}
	if len(open) == 0 {
		rt.Skip("no retirement open")
	}
	slices.Sort(open)
	name := rapid.SampledFrom(open).Draw(rt, "retirement")
	m.end(name)
	m.send(modelNotice{name: "closed " + name, ends: []string{name}, in: event.Interruption{
		Kind: event.KindScheduledChange, EventID: name, Restore: true}})
}

func (m *holdsModel) stop(rt *rapid.T) {
	if m.state != "running" || m.inPool || m.action != "" {
		rt.Skip("only a running instance in service is stopped")
	}
	m.state = "stopped"
	m.setState()
	name := m.id("stop")
	m.standing[name] = true
	m.send(modelNotice{name: name, threat: name, in: event.Interruption{Kind: event.KindStateChange,
		EventID: name, State: "stopped"}})
}

func (m *holdsModel) start(rt *rapid.T) {
	if m.state != "stopped" {
		rt.Skip("only a stopped instance starts")
	}
	m.state = "running"
	m.setState()
	var ends []string
	for name := range m.standing {
		if !strings.HasPrefix(name, "tok-") { // a start ends a stop, a Spot stop and a retirement
			ends = append(ends, name)
			m.end(name)
		}
	}
	m.send(modelNotice{name: m.id("running"), ends: ends, in: event.Interruption{Kind: event.KindStateChange,
		EventID: m.id("running"), State: "running", Restore: true}})
}

func (m *holdsModel) scaleIn(rt *rapid.T) {
	if m.state != "running" || m.inPool || m.action != "" {
		rt.Skip("Auto Scaling scales in a running instance in service")
	}
	m.action = m.id("tok")
	m.standing[m.action] = true
	m.send(modelNotice{name: m.action, threat: m.action, in: event.Interruption{Kind: event.KindASGLifecycle,
		EventID: m.id("asg"), Lifecycle: &event.Lifecycle{ASG: "prod-workers", Hook: "drainpipe", Token: m.action,
			Transition: event.TransitionTerminating, InstanceID: instID, Origin: "AutoScalingGroup", Destination: "WarmPool"}}})
}

func (m *holdsModel) launch(rt *rapid.T) {
	if !m.inPool {
		rt.Skip("only a pooled instance launches out of the pool")
	}
	pooled := m.action
	m.inPool, m.action = false, ""
	m.end(pooled)
	tok := m.id("launch")
	m.send(modelNotice{name: tok, ends: []string{pooled}, in: event.Interruption{Kind: event.KindASGLaunchLifecycle,
		EventID: tok, Lifecycle: &event.Lifecycle{ASG: "prod-workers", Hook: "drainpipe-launch", Token: tok,
			Transition: event.TransitionLaunching, InstanceID: instID, Origin: "WarmPool", Destination: "AutoScalingGroup"}}})
}

func (m *holdsModel) end(name string) {
	delete(m.standing, name)
	m.ended[name] = true
}

func (m *holdsModel) setState() {
	inst := ourInstance()
	inst.State = m.state
	m.ec2.mu.Lock()
	m.ec2.known[instID] = inst
	m.ec2.mu.Unlock()
}

// deliver hands one pending notice, any of them, to the function.
func (m *holdsModel) deliver(rt *rapid.T) {
	if len(m.pending) == 0 {
		rt.Skip("nothing pending")
	}
	i := rapid.IntRange(0, len(m.pending)-1).Draw(rt, "which")
	n := m.pending[i]
	m.pending = slices.Delete(m.pending, i, i+1)
	m.act(rt, n, 1)
	m.sent = append(m.sent, n)
}

// duplicate delivers again a notice already delivered: the second of a
// lifecycle action's two deliveries, an EventBridge retry, a redrive.
func (m *holdsModel) duplicate(rt *rapid.T) {
	if len(m.sent) == 0 {
		rt.Skip("nothing delivered yet")
	}
	n := rapid.SampledFrom(m.sent).Draw(rt, "again")
	m.act(rt, n, rapid.IntRange(1, 2).Draw(rt, "receive"))
}

// cordonCopy delivers the cordon queue's copy of a notice sent, whether
// or not its own has been delivered, acting only within copyMaxAge.
func (m *holdsModel) cordonCopy(rt *rapid.T) {
	all := append(slices.Clone(m.pending), m.sent...)
	if len(all) == 0 {
		rt.Skip("nothing sent")
	}
	m.deliverCopy(rt, rapid.SampledFrom(all).Draw(rt, "copy"))
}

func (m *holdsModel) act(rt *rapid.T, n modelNotice, receive int) {
	m.actAs(rt, n, receive, false)
}

func (m *holdsModel) deliverCopy(rt *rapid.T, n modelNotice) {
	m.actAs(rt, n, 1, true)
}

func (m *holdsModel) actAs(rt *rapid.T, n modelNotice, receive int, copied bool) {
	acted := !copied || m.now.Add(time.Second).Sub(n.in.Time) <= copyMaxAge
	if n.threat != "" && m.ended[n.threat] && n.in.Lifecycle == nil && acted {
		// The threat's end came first: the node is held until the
		// sweep's bound (its notice cannot tell it is over).
		m.lag = append(m.lag, n.name)
	}
	for _, e := range n.ends {
		if !copied {
			m.endSeen[e] = true
		}
	}
	a := policy.ActionCordonAndDrain
	switch {
	case n.in.Restore || n.in.Kind == event.KindASGLaunchLifecycle:
		a = policy.ActionNone
	case n.in.Lifecycle != nil && rapid.Bool().Draw(rt, "cordon only"):
		a = policy.ActionCordon // DRAINPIPE_ACTION_ASG_LIFECYCLE=cordon
	}
	m.r.clock.mu.Lock()
	m.r.clock.now = m.now.Add(time.Second)
	m.r.clock.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tk := handler.Task{InstanceID: instID, Action: a, Interruptions: []event.Interruption{n.in}, ReceiveCount: receive}
	if copied {
		tk.Copy, tk.Sent = true, n.in.Time
	}
	res := m.r.actor.Act(ctx, tk)
	m.rt.Logf("%s (receive %d, copy %t): %s", n.name, receive, copied, res.Reason)
	if tok := n.threat; n.in.Lifecycle != nil && m.action == tok && m.hooks.done(tok) && !m.inPool {
		m.inPool = true // completed: the instance goes to the Running warm pool
	}
}

// check holds the invariant whenever nothing sent waits for delivery.
func (m *holdsModel) check(rt *rapid.T) {
	if len(m.pending) > 0 {
		return
	}
	node, err := m.client.CoreV1().Nodes().Get(context.Background(), nodeName, metav1.GetOptions{})
	if err != nil {
		rt.Fatalf("getting the node: %v", err)
	}
	marks := drain.ReadMarks(node)
	for name := range m.standing {
		if !node.Spec.Unschedulable {
			rt.Fatalf("threat %s stands, node %s is schedulable (holds %s)", name, nodeName, marks.Holds)
		}
	}
	if len(m.standing) > 0 || len(m.lag) > 0 {
		return
	}
	if node.Spec.Unschedulable || marks.Held() || node.Labels[drain.LabelHeld] != "" {
		rt.Fatalf("no threat stands, node still held: unschedulable %v, holds %s, labels %v, taints %v",
			node.Spec.Unschedulable, marks.Holds, node.Labels, node.Spec.Taints)
	}
}

// sweepLater lets every threat's bound and the sweep's margin pass, once
// every notice is delivered and no terminate action is pending or pooled
// (their holds end with the launch), then runs the sweep. A Spot warning
// whose instance still runs past its deadline is over: EC2 did not take
// it.
func (m *holdsModel) sweepLater(rt *rapid.T) {
	if len(m.pending) > 0 || m.inPool || m.action != "" {
		rt.Skip("notices in flight, or an action pending")
	}
	m.now = m.now.Add(80 * time.Hour)
	for _, start := range m.retireAt { // past every window's end and the margin
		if end := start.Add(25 * time.Hour); end.After(m.now) {
			m.now = end
		}
	}
	if m.state == "running" {
		for name := range m.standing {
			if strings.HasPrefix(name, "spot-") {
				m.end(name)
			}
		}
	}
	m.r.clock.mu.Lock()
	m.r.clock.now = m.now
	m.r.clock.mu.Unlock()
	rep := m.sweeper.Sweep(context.Background())
	if len(rep.Errors) > 0 {
		rt.Fatalf("sweep: %v", rep.Errors)
	}
	rt.Logf("sweep: %d repairs %+v, left %+v", len(rep.Repairs), rep.Repairs, rep.Left)
	m.lag = nil
}

// modelEC2 is EC2 as the sweep reads it, from the model.
type modelEC2 struct{ m *holdsModel }

func (e modelEC2) Describe(_ context.Context, ids []string) (map[string]instance.Instance, error) {
	inst := ourInstance()
	inst.State = e.m.state
	inst.Tags = map[string]string{"aws:autoscaling:groupName": "prod-workers"}
	return map[string]instance.Instance{instID: inst}, nil
}

// Scheduled lists the retirements that stand, as EC2 lists a scheduled
// event until it is over.
func (e modelEC2) Scheduled(context.Context) ([]instance.ScheduledEvent, error) {
	var out []instance.ScheduledEvent
	for name := range e.m.standing {
		if strings.Contains(name, "retire") {
			out = append(out, instance.ScheduledEvent{InstanceID: instID, ID: name, Code: "instance-retirement",
				NotBefore: e.m.retireAt[name]})
		}
	}
	return out, nil
}

func (e modelEC2) Stopped(context.Context) (map[string]instance.Instance, error) {
	out := map[string]instance.Instance{}
	if e.m.state == "stopped" {
		inst := ourInstance()
		inst.State = "stopped"
		out[instID] = inst
	}
	return out, nil
}

// modelLife: a terminate action of the group lasts an hour at most.
type modelLife struct{}

func (modelLife) ActionLife(context.Context, string, []string) (time.Duration, error) {
	return time.Hour, nil
}

// modelHooks answers like Auto Scaling: an action completed is over, and a
// heartbeat or a second completion says so.
type modelHooks struct {
	mu        sync.Mutex
	completed map[string]bool
}

func (h *modelHooks) Heartbeat(_ context.Context, l event.Lifecycle) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.completed[l.Token] {
		return fmt.Errorf("recording heartbeat: %w", lifecycle.ErrInactive)
	}
	return nil
}

func (h *modelHooks) Complete(_ context.Context, l event.Lifecycle) (bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	already := h.completed[l.Token]
	h.completed[l.Token] = true
	return already, nil
}

func (h *modelHooks) done(tok string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.completed[tok]
}
