package main

import (
	"context"
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// The demo's AWS side: the cluster the instances are tagged for and the
// Auto Scaling group and hook holding node 2.
const (
	clusterName = "demo-cluster"
	asgName     = "demo-workers"
	hookName    = "drain-before-terminate"
	hookToken   = "2f4c6e8a-1b3d-4f5a-9c7e-0a2b4c6d8e0f"
)

// scene is the cluster and the AWS account the demo plays in.
type scene struct {
	env   *fixture.Env
	fake  *awsfake.Server
	nodes [3]*corev1.Node
}

// workload is one line of the scene's description.
type workload struct{ name, where, budget string }

// buildScene creates three EKS-like nodes (node 1 a Spot instance), the
// workloads a drain meets, and the EC2 instances and pending lifecycle
// action behind them in the fake.
func buildScene(ctx context.Context, w io.Writer, cfg *rest.Config, fake *awsfake.Server) (*scene, error) {
	t := &fixtureT{name: "demo"}
	s := &scene{fake: fake}
	err := t.step(func() {
		s.env = fixture.New(t, cfg)
		s.env.Timeout = 90 * time.Second
		s.nodes[0] = s.env.Node(ctx, fixture.NodeOptions{Region: awsfake.Region, CapacityType: "SPOT", NodeGroup: "spot"})
		s.nodes[1] = s.env.Node(ctx, fixture.NodeOptions{Region: awsfake.Region, NodeGroup: asgName})
		s.nodes[2] = s.env.Node(ctx, fixture.NodeOptions{Region: awsfake.Region, NodeGroup: asgName})
	})
	if err != nil {
		return nil, fmt.Errorf("creating nodes: %w", err)
	}
	for i, n := range s.nodes {
		fmt.Fprintf(w, "  node %d  %-44s %s  %-9s %s\n", i+1, n.Name, fixture.InstanceID(n),
			n.Labels["eks.amazonaws.com/capacityType"], n.Labels[corev1.LabelTopologyZone])
	}

	n1, n2 := s.nodes[0].Name, s.nodes[1].Name
	workloads := []workload{
		{"node-agent", "DaemonSet, one pod per node", "left alone by drains"},
		{"web", "Deployment, 3 pods on node 1", "PDB maxUnavailable=1"},
		{"api", "Deployment, 2 pods on node 2", "PDB minAvailable=1"},
		{"queue-worker", "Deployment, 1 pod on node 2", "3 s termination grace period"},
	}
	err = t.step(func() {
		s.env.DaemonSet(ctx, "node-agent")
		s.env.Deployment(ctx, "web", 3, fixture.OnNode(n1))
		s.env.PDB(ctx, "web", map[string]string{"app": "web"}, fixture.MaxUnavailable(1))
		s.env.Deployment(ctx, "api", 2, fixture.OnNode(n2))
		s.env.PDB(ctx, "api", map[string]string{"app": "api"}, fixture.MinAvailable(1))
		s.env.Deployment(ctx, "queue-worker", 1, fixture.OnNode(n2), fixture.GracePeriod(3))
	})
	if err != nil {
		return nil, fmt.Errorf("creating workloads: %w", err)
	}
	fmt.Fprintf(w, "\n  namespace %s:\n", s.env.Namespace)
	for _, wl := range workloads {
		fmt.Fprintf(w, "  %-13s %-30s %s\n", wl.name, wl.where, wl.budget)
	}

	for _, n := range s.nodes {
		fake.AddInstances(awsfake.Instance{
			ID:               fixture.InstanceID(n),
			PrivateDNSName:   n.Name,
			AvailabilityZone: n.Labels[corev1.LabelTopologyZone],
			Lifecycle:        "spot", // Spot warnings are checked against it
			Tags:             map[string]string{"eks:cluster-name": clusterName},
			LaunchTime:       time.Now().Add(-time.Hour),
		})
	}
	fake.AddLifecycleAction(awsfake.LifecycleAction{ASG: asgName, Hook: hookName, Token: hookToken, InstanceID: s.instance(1)})
	stageAccount(fake)
	return s, nil
}

// stageAccount makes the fake answer every other call the function makes,
// as an account would: the hook (its heartbeat timeout caps a retry) and
// the queue the events come from (its URL, to time retried records).
func stageAccount(fake *awsfake.Server) {
	fake.AddLifecycleHook(awsfake.LifecycleHook{ASG: asgName, Name: hookName, HeartbeatTimeout: 5 * time.Minute, DefaultResult: "CONTINUE"})
	fake.AddQueue(account, queueName)
}

// instance is the EC2 instance id of node i (0-based).
func (s *scene) instance(i int) string { return fixture.InstanceID(s.nodes[i]) }
