package fleet

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// Times is what the observer saw of one target node, relative to the
// wave's enqueue.
type Times struct {
	Cordoned, Drained time.Duration // zero until seen
	// Reclaimed is when the instance was taken back at its deadline
	// (Fleet.Reclaim), zero if it was not; Lost is how many evictable pods
	// the node still held then. A node reclaimed undrained counts as
	// drained at that time: nothing is left on it.
	Reclaimed time.Duration
	Lost      int
}

// Observer watches the fleet's nodes and pods (with the admin client, so
// its own requests stay out of the measured priority levels) and records
// when each target node is first cordoned and first has no evictable pod
// left: none but DaemonSet pods, terminating or finished pods.
type Observer struct {
	targets map[string]bool
	stop    chan struct{}

	mu        sync.Mutex
	start     time.Time
	times     map[string]*Times
	evictable map[string]map[string]bool // node → pod keys
	changed   chan struct{}              // closed and replaced on progress
}

// Observe starts watching, the pods through c and the nodes through
// nodes; Start sets the wave's zero time. Give nodes a connection of its
// own (OwnConnection): on one HTTP/2 connection a drain's flood of pod
// events held back the node events, and a cordon the function had logged
// at 0.86 s was seen at 1.41 s.
func (f *Fleet) Observe(ctx context.Context, c, nodes kubernetes.Interface) (*Observer, error) {
	o := &Observer{
		targets: map[string]bool{}, stop: make(chan struct{}),
		times: map[string]*Times{}, evictable: map[string]map[string]bool{}, changed: make(chan struct{}),
	}
	for _, n := range f.Targets() {
		o.targets[n.Name] = true
		o.times[n.Name] = &Times{}
		o.evictable[n.Name] = map[string]bool{}
	}
	pods := informers.NewSharedInformerFactoryWithOptions(c, 0, informers.WithNamespace(f.Namespace)).Core().V1().Pods().Informer()
	nodeInf := informers.NewSharedInformerFactoryWithOptions(nodes, 0, informers.WithTweakListOptions(func(lo *metav1.ListOptions) {
		lo.LabelSelector = fixture.PoolLabel + "=" + f.pool
	})).Core().V1().Nodes().Informer()
	podHandler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { o.pod(obj, false) },
		UpdateFunc: func(_, obj any) { o.pod(obj, false) },
		DeleteFunc: func(obj any) { o.pod(obj, true) },
	}
	nodeHandler := cache.ResourceEventHandlerFuncs{
		AddFunc:    o.node,
		UpdateFunc: func(_, obj any) { o.node(obj) },
	}
	if _, err := pods.AddEventHandler(podHandler); err != nil {
		return nil, fmt.Errorf("watching pods: %w", err)
	}
	if _, err := nodeInf.AddEventHandler(nodeHandler); err != nil {
		return nil, fmt.Errorf("watching nodes: %w", err)
	}
	go pods.Run(o.stop)
	go nodeInf.Run(o.stop)
	if !cache.WaitForCacheSync(ctx.Done(), pods.HasSynced, nodeInf.HasSynced) {
		close(o.stop)
		return nil, fmt.Errorf("syncing the observer's caches: %w", ctx.Err())
	}
	return o, nil
}

// Start sets the zero time: call it just before enqueueing the wave.
func (o *Observer) Start() time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.start = time.Now()
	return o.start
}

// Stop ends the watches.
func (o *Observer) Stop() { close(o.stop) }

func (o *Observer) node(obj any) {
	n, ok := obj.(*corev1.Node)
	if !ok || !o.targets[n.Name] || !n.Spec.Unschedulable {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if t := o.times[n.Name]; !o.start.IsZero() && t.Cordoned == 0 {
		t.Cordoned = time.Since(o.start)
		o.progress(n.Name)
	}
}

// Reclaimed records that node's instance is being taken back now, with
// the evictable pods the watch last saw on it.
func (o *Observer) Reclaimed(node string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	t := o.times[node]
	if t == nil || o.start.IsZero() || t.Reclaimed != 0 {
		return
	}
	t.Reclaimed = time.Since(o.start)
	if t.Drained != 0 {
		return
	}
	t.Lost, t.Drained = len(o.evictable[node]), t.Reclaimed
	o.drained()
}

func (o *Observer) pod(obj any, deleted bool) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj, deleted = d.Obj, true
	}
	p, ok := obj.(*corev1.Pod)
	if !ok || !o.targets[p.Spec.NodeName] {
		return
	}
	key := p.Name
	o.mu.Lock()
	defer o.mu.Unlock()
	if deleted || !Evictable(p) {
		delete(o.evictable[p.Spec.NodeName], key)
	} else {
		o.evictable[p.Spec.NodeName][key] = true
	}
	o.progress(p.Spec.NodeName)
}

// progress records a drain once the node is cordoned and empty; o.mu is held.
func (o *Observer) progress(node string) {
	t := o.times[node]
	if o.start.IsZero() || t.Cordoned == 0 || t.Drained != 0 || len(o.evictable[node]) > 0 {
		return
	}
	t.Drained = time.Since(o.start)
	o.drained()
}

// drained wakes WaitDrained: a node has just been drained; o.mu is held.
func (o *Observer) drained() {
	close(o.changed)
	o.changed = make(chan struct{})
}

// Evictable reports whether a drain must still move p: not terminating,
// not finished, not a mirror or DaemonSet pod.
func Evictable(p *corev1.Pod) bool {
	if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return false
	}
	if _, mirror := p.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		return false
	}
	for _, ref := range p.OwnerReferences {
		if ref.Kind == "DaemonSet" {
			return false
		}
	}
	return true
}

// Times returns a copy of every target node's times.
func (o *Observer) Times() map[string]Times {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make(map[string]Times, len(o.times))
	for k, v := range o.times {
		out[k] = *v
	}
	return out
}

// EvictableOn is how many evictable pods the watch last saw on node.
func (o *Observer) EvictableOn(node string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.evictable[node])
}

// WaitDrained waits until every target node is drained, or ctx ends;
// given nodes, it waits for those only.
func (o *Observer) WaitDrained(ctx context.Context, only ...Node) error {
	wanted := func(string) bool { return true }
	if len(only) > 0 {
		names := map[string]bool{}
		for _, n := range only {
			names[n.Name] = true
		}
		wanted = func(name string) bool { return names[name] }
	}
	for {
		o.mu.Lock()
		left, ch := 0, o.changed
		for name, t := range o.times {
			if t.Drained == 0 && wanted(name) {
				left++
			}
		}
		o.mu.Unlock()
		if left == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d nodes not drained: %w", left, ctx.Err())
		case <-ch:
		}
	}
}

// OwnConnection is a clientset for cfg on a connection of its own:
// client-go shares one transport, and so one HTTP/2 connection, between
// clients of the same server and credentials, unless their dialers
// differ.
func OwnConnection(cfg *rest.Config) (kubernetes.Interface, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.Dial = (&net.Dialer{}).DialContext
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating a client on its own connection: %w", err)
	}
	return c, nil
}
