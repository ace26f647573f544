package pipeline

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/instance"
	"github.com/drainpipe/drainpipe/internal/nodemap"
)

// Recording fakes of the pipeline's narrow interfaces.

type fakeInstances struct {
	mu    sync.Mutex
	known map[string]instance.Instance
	err   error
	calls [][]string
	// members lists each capacity reservation's instances (InReservation).
	members map[string][]string
	called  chan struct{} // when set, receives one value per Describe
}

func (f *fakeInstances) InReservation(_ context.Context, id string) (map[string]instance.Instance, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, []string{id})
	if f.err != nil {
		return nil, f.err
	}
	out := map[string]instance.Instance{}
	for _, i := range f.members[id] {
		out[i] = f.known[i]
	}
	return out, nil
}

func (f *fakeInstances) Describe(_ context.Context, ids []string) (map[string]instance.Instance, error) {
	if f.called != nil {
		f.called <- struct{}{}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, append([]string(nil), ids...))
	if f.err != nil {
		return nil, f.err
	}
	out := map[string]instance.Instance{}
	for _, id := range ids {
		if in, ok := f.known[id]; ok {
			out[id] = in
		}
	}
	return out, nil
}

type fakeClusters struct {
	err    error
	client kubernetes.Interface // nil unless a test reads through it
}

func (f fakeClusters) Client(context.Context, string) (kubernetes.Interface, error) {
	return f.client, f.err
}

// finder maps instance ids to node names; unknown ids are not found.
func finder(nodes map[string]string, err error) NodeFinder {
	return func(_ context.Context, _ kubernetes.Interface, inst instance.Instance) (string, error) {
		if err != nil {
			return "", err
		}
		if n, ok := nodes[inst.ID]; ok {
			return n, nil
		}
		return "", nodemap.ErrNotFound
	}
}

type fakeDrainer struct {
	mu        sync.Mutex
	reqs      []drain.Request
	deadlines []time.Time
	report    drain.Report
	err       error
	during    func(ctx context.Context) // runs inside Run, e.g. to tick the clock
	// run, when set, plays the drain's part of a Run between its cordon
	// and its evictions (the request's AfterCordon).
	run func(ctx context.Context, req drain.Request)
}

func (f *fakeDrainer) Run(ctx context.Context, req drain.Request) (drain.Report, error) {
	if f.during != nil {
		f.during(ctx)
	}
	if f.run != nil {
		f.run(ctx, req)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reqs = append(f.reqs, req)
	dl, _ := ctx.Deadline()
	f.deadlines = append(f.deadlines, dl)
	r := f.report
	r.Node = req.Node
	return r, f.err
}

func (f *fakeDrainer) factory(kubernetes.Interface) Drainer { return f }

// fakeHooks remembers completed actions like Auto Scaling does: a second
// completion of the same action finds it already done.
type fakeHooks struct {
	mu           sync.Mutex
	heartbeats   []event.Lifecycle
	completes    []event.Lifecycle
	completed    map[event.Lifecycle]bool
	completeErr  error
	heartbeatErr error
	beat         chan struct{} // when set, receives one value per heartbeat
	hold         chan struct{} // when set, heartbeats answer once it is closed
}

func (f *fakeHooks) Heartbeat(ctx context.Context, l event.Lifecycle) error {
	f.mu.Lock()
	f.heartbeats = append(f.heartbeats, l)
	f.mu.Unlock()
	if f.beat != nil {
		f.beat <- struct{}{}
	}
	if f.hold != nil {
		select {
		case <-f.hold:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return f.heartbeatErr
}

func (f *fakeHooks) Complete(_ context.Context, l event.Lifecycle) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.completes = append(f.completes, l)
	if f.completeErr != nil {
		return false, f.completeErr
	}
	if f.completed == nil {
		f.completed = map[event.Lifecycle]bool{}
	}
	already := f.completed[l]
	f.completed[l] = true
	return already, nil
}

func (f *fakeHooks) counts() (heartbeats, completes int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.heartbeats), len(f.completes)
}

type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	tickers []*fakeTicker
	made    chan *fakeTicker // when set, receives each new ticker
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func (c *fakeClock) NewTicker(d time.Duration) Ticker {
	t := &fakeTicker{every: d, c: make(chan time.Time)}
	c.mu.Lock()
	c.tickers = append(c.tickers, t)
	c.mu.Unlock()
	if c.made != nil {
		c.made <- t
	}
	return t
}

type fakeTicker struct {
	every time.Duration
	c     chan time.Time
}

func (t *fakeTicker) C() <-chan time.Time { return t.c }
func (t *fakeTicker) Stop()               {}

// countingRecorder counts successful hook completions: those that were not
// already done.
type countingRecorder struct {
	NopRecorder
	mu        sync.Mutex
	completed int
	drains    int
}

func (r *countingRecorder) RecordHook(op HookOp, _ event.Lifecycle, already bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if op == HookComplete && !already && err == nil {
		r.completed++
	}
}

func (r *countingRecorder) RecordDrain(string, drain.Report) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.drains++
}

// rig is an Actor wired to fakes, with its log captured.
type rig struct {
	actor     *Actor
	instances *fakeInstances
	drainer   *fakeDrainer
	hooks     *fakeHooks
	clock     *fakeClock
	rec       *countingRecorder
	logs      *bytes.Buffer
}

var (
	t0      = time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)
	errBoom = errors.New("boom")
)

const (
	instID   = "i-0123456789abcdef0"
	nodeName = "ip-10-0-1-23.eu-west-1.compute.internal"
)

type rigOpts struct {
	cfg         Config
	instances   map[string]instance.Instance
	describeErr error
	members     map[string][]string // capacity reservation -> instances
	nodes       map[string]string
	findErr     error
	clusterErr  error
	drainer     *fakeDrainer
	hooks       *fakeHooks
	clock       *fakeClock
	router      *instance.Router // when set, the lookup offers it like *instance.Lookup
	// timeouts, when set, are the hooks' heartbeat timeouts by hook name
	// (a missing name fails like an unknown hook).
	timeouts map[string]time.Duration
	nodeOf   NodeGetter // optional: the node as read, for launch hooks
	client   kubernetes.Interface
}

// timedHooks are fakeHooks that also tell heartbeat timeouts.
type timedHooks struct {
	*fakeHooks
	timeouts map[string]time.Duration
}

func (h timedHooks) HeartbeatTimeout(_ context.Context, _, hook string) (time.Duration, error) {
	d, ok := h.timeouts[hook]
	if !ok {
		return 0, errBoom
	}
	return d, nil
}

// routedInstances is a lookup that also offers its router.
type routedInstances struct {
	*fakeInstances
	router instance.Router
}

func (r routedInstances) Router() instance.Router { return r.router }

func mustRouter(t *testing.T, clusters []string, tag string) *instance.Router {
	t.Helper()
	r, err := instance.NewRouter(clusters, tag)
	if err != nil {
		t.Fatalf("NewRouter: %v", err)
	}
	return &r
}

func newRig(t *testing.T, o rigOpts) *rig {
	t.Helper()
	if o.instances == nil {
		o.instances = map[string]instance.Instance{instID: ourInstance()}
	}
	if o.nodes == nil {
		o.nodes = map[string]string{instID: nodeName}
	}
	if o.drainer == nil {
		o.drainer = &fakeDrainer{report: drain.Report{Done: true}}
	}
	if o.hooks == nil {
		o.hooks = &fakeHooks{}
	}
	if o.clock == nil {
		o.clock = &fakeClock{now: t0}
	}
	r := &rig{
		instances: &fakeInstances{known: o.instances, err: o.describeErr, members: o.members},
		drainer:   o.drainer, hooks: o.hooks, clock: o.clock, rec: &countingRecorder{}, logs: &bytes.Buffer{},
	}
	var lookup Instances = r.instances
	if o.router != nil {
		lookup = routedInstances{fakeInstances: r.instances, router: *o.router}
	}
	var hooks Hooks = r.hooks
	if o.timeouts != nil {
		hooks = timedHooks{fakeHooks: r.hooks, timeouts: o.timeouts}
	}
	a, err := New(o.cfg, Deps{
		Instances: lookup, Clusters: fakeClusters{err: o.clusterErr, client: o.client}, FindNode: finder(o.nodes, o.findErr),
		NewDrainer: r.drainer.factory, Hooks: hooks, Recorder: r.rec, Clock: r.clock, NodeOf: o.nodeOf,
		Log: slog.New(slog.NewJSONHandler(&syncWriter{w: r.logs}, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	r.actor = a
	return r
}

type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func ourInstance() instance.Instance {
	return instance.Instance{ID: instID, State: "running", PrivateDNSName: nodeName, AvailabilityZone: "eu-west-1a",
		Cluster: "prod", Lifecycle: "spot"}
}

func spot(at time.Time) event.Interruption {
	return event.Interruption{Kind: event.KindSpotInterruption, Instances: []string{instID}, EventID: "spot-1",
		Time: at, Deadline: at.Add(2 * time.Minute)}
}

func lifecycleEvent(at time.Time) event.Interruption {
	return event.Interruption{Kind: event.KindASGLifecycle, Instances: []string{instID}, EventID: "asg-1", Time: at,
		Lifecycle: &event.Lifecycle{ASG: "prod-workers", Hook: "drain", Token: "tok-1",
			Transition: "autoscaling:EC2_INSTANCE_TERMINATING", InstanceID: instID}}
}
