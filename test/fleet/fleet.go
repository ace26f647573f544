// Package fleet builds a fleet of EKS-like kwok nodes on a sandbox control
// plane, with the EC2 instances and Auto Scaling lifecycle actions behind
// them on test/awsfake, sends a wave of interruptions for it through a
// modelled SQS queue, and measures per node when it was cordoned and
// drained. The spot-wave benchmark (test/bench/wave) and the CI wave test
// use it; fault tests reuse it with their own faults injected (the fake's
// Inject, the mapping's Kill, the sandbox's processes).
package fleet

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// Spec is a fleet's shape; the same Spec and Seed build identical fleets.
type Spec struct {
	Nodes       int     // kwok nodes
	PodsPerNode int     // pods per node, one of them a DaemonSet's
	SpotShare   float64 // share of nodes that get a Spot warning in the wave
	HookShare   float64 // share of the others, in Auto Scaling groups with terminate hooks
	Replicas    int     // pods per Deployment; default 20
	Cluster     string  // the eks:cluster-name tag; default DefaultCluster
	Seed        uint64  // node names, instance ids and addresses
	// LongGrace is the grace period of every fifth Deployment's pods;
	// default DefaultLongGrace.
	LongGrace time.Duration
	// HeartbeatTimeout, when set, defines the groups' terminate hooks
	// on the fake with it: an action not heartbeaten in time expires.
	// Zero leaves the hooks undefined (their actions never expire).
	HeartbeatTimeout time.Duration
	// Blocked hooked nodes also run a pod behind a budget that never
	// allows a disruption: they cannot be drained.
	Blocked int
}

// Node is one node of the fleet and its part in the wave.
type Node struct {
	Name, InstanceID, Zone string
	Spot                   bool                     // gets a Spot interruption warning
	Hook                   *awsfake.LifecycleAction // its pending terminate action, if any
	Blocked                bool                     // runs a pod no eviction may take (Spec.Blocked)
}

// Fleet is a built fleet.
type Fleet struct {
	Spec      Spec
	Namespace string
	Nodes     []Node
	pool      string
}

// Namespace and pool label value of every fleet (one fleet per sandbox).
const (
	namespace = "fleet"
	HookName  = "drainpipe-terminate"
	// DefaultLongGrace is the grace period of the long-grace Deployments' pods.
	DefaultLongGrace = 45 * time.Second
	// ASGs is how many Auto Scaling groups the hooked nodes are spread over.
	ASGs = 4
)

// DefaultCluster is the fleet's cluster name unless Spec.Cluster says
// otherwise (an EKS-auth sandbox's EKSAuth.Cluster must match it).
const DefaultCluster = "fleet"

func (s Spec) withDefaults() Spec {
	if s.Replicas == 0 {
		s.Replicas = 20
	}
	if s.Cluster == "" {
		s.Cluster = DefaultCluster
	}
	if s.LongGrace == 0 {
		s.LongGrace = DefaultLongGrace
	}
	return s
}

// Targets returns the nodes the wave interrupts.
func (f *Fleet) Targets() []Node {
	var out []Node
	for _, n := range f.Nodes {
		if n.Spot || n.Hook != nil {
			out = append(out, n)
		}
	}
	return out
}

// Build creates the fleet with the admin client and registers its
// instances and lifecycle actions on fake; it returns once every pod is
// Ready and every budget has a status.
func Build(ctx context.Context, c kubernetes.Interface, fake *awsfake.Server, spec Spec) (*Fleet, error) {
	spec = spec.withDefaults()
	f := &Fleet{Spec: spec, Namespace: namespace, pool: namespace}
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("creating namespace: %w", err)
	}
	if err := f.createNodes(ctx, c, fake); err != nil {
		return nil, err
	}
	if err := waitNodesReady(ctx, c, f.pool, len(f.Nodes)); err != nil {
		return nil, err
	}
	if err := f.createWorkloads(ctx, c); err != nil {
		return nil, err
	}
	if err := f.createBlockers(ctx, c); err != nil {
		return nil, err
	}
	return f, f.waitWorkloads(ctx, c)
}

// createNodes creates the nodes, their instances and the lifecycle actions.
func (f *Fleet) createNodes(ctx context.Context, c kubernetes.Interface, fake *awsfake.Server) error {
	s := f.Spec
	r := rand.New(rand.NewPCG(s.Seed, 0x5eed))
	nSpot := int(float64(s.Nodes)*s.SpotShare + 0.5)
	nHook := int(float64(s.Nodes-nSpot)*s.HookShare + 0.5)
	nodes := make([]*corev1.Node, s.Nodes)
	if s.HeartbeatTimeout > 0 {
		for g := range ASGs {
			fake.AddLifecycleHook(awsfake.LifecycleHook{ASG: asgName(g), Name: HookName, HeartbeatTimeout: s.HeartbeatTimeout})
		}
	}
	for i := range nodes {
		opts := fixture.NodeOptions{
			Region: awsfake.Region, Zone: awsfake.Region + string(rune('a'+i%3)),
			NodeGroup: "on-demand", MaxPods: 110, Labels: map[string]string{fixture.PoolLabel: f.pool},
			IP: fmt.Sprintf("10.%d.%d.%d", 1+i/65000, (i/250)%256, 1+i%250),
		}
		if i < nSpot {
			opts.NodeGroup, opts.CapacityType = "spot", "SPOT"
		}
		nodes[i] = fixture.EKSNode(opts, r)
		n := Node{Name: nodes[i].Name, InstanceID: fixture.InstanceID(nodes[i]), Zone: opts.Zone, Spot: i < nSpot}
		tags := map[string]string{"eks:cluster-name": s.Cluster}
		if i >= nSpot && i < nSpot+nHook {
			asg := asgName(i % ASGs)
			tags["aws:autoscaling:groupName"] = asg
			n.Hook = &awsfake.LifecycleAction{ASG: asg, Hook: HookName, Token: randomUUID(r), InstanceID: n.InstanceID}
			n.Blocked = i-nSpot < s.Blocked
			fake.AddLifecycleAction(*n.Hook)
		}
		inst := awsfake.Instance{
			ID: n.InstanceID, PrivateDNSName: n.Name, AvailabilityZone: n.Zone, Tags: tags, LaunchTime: time.Now().Add(-time.Hour),
		}
		if n.Spot { // Drainpipe checks a Spot warning against EC2's instanceLifecycle
			inst.Lifecycle = "spot"
		}
		fake.AddInstances(inst)
		f.Nodes = append(f.Nodes, n)
	}
	return parallel(ctx, 16, len(nodes), func(ctx context.Context, i int) error {
		if _, err := c.CoreV1().Nodes().Create(ctx, nodes[i], metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating node %s: %w", nodes[i].Name, err)
		}
		return nil
	})
}

// parallel runs fn for 0..n-1 on workers goroutines and returns the first
// error.
func parallel(ctx context.Context, workers, n int, fn func(context.Context, int) error) error {
	jobs := make(chan int)
	var once sync.Once
	var first error
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range jobs {
				if err := fn(ctx, i); err != nil {
					once.Do(func() { first = err })
				}
			}
		})
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return first
}

// createWorkloads creates one DaemonSet and enough Deployments for
// PodsPerNode pods a node: every third behind a budget allowing a quarter
// unavailable, every third behind one keeping 80% available, every fifth
// with a long grace period.
func (f *Fleet) createWorkloads(ctx context.Context, c kubernetes.Interface) error {
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "node-agent"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "node-agent"}},
			Template: f.template("node-agent", 0, true),
		},
	}
	if _, err := c.AppsV1().DaemonSets(namespace).Create(ctx, ds, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating daemonset: %w", err)
	}
	deps := f.deployments()
	return parallel(ctx, 8, len(deps), func(ctx context.Context, i int) error {
		d := deps[i]
		if _, err := c.AppsV1().Deployments(namespace).Create(ctx, d.dep, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating deployment %s: %w", d.dep.Name, err)
		}
		if d.pdb != nil {
			if _, err := c.PolicyV1().PodDisruptionBudgets(namespace).Create(ctx, d.pdb, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("creating budget %s: %w", d.pdb.Name, err)
			}
		}
		return nil
	})
}

func asgName(i int) string { return fmt.Sprintf("fleet-asg-%d", i) }

func randomUUID(r *rand.Rand) string {
	return fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", r.Uint32(), r.Uint32()&0xffff, r.Uint32()&0xfff, r.Uint32()&0xfff, r.Uint64()&0xffffffffffff)
}
