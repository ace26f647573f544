package fleet_test

import (
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/test/fleet"
	"github.com/drainpipe/drainpipe/test/sandbox"
)

// TestWaveEndpointChanges is fault 10, the cluster recreated under the
// same name while a container is warm. The bootstrap runs in EKS mode
// (DescribeCluster, tokens checked by aws-iam-authenticator) and first
// reaches the cluster through an EndpointProxy, the old incarnation.
// Once the first part of the wave is done, the proxy closes (its port
// refuses connections, open ones are cut) and DescribeCluster answers the
// API server's own address. Then a lone hook event (the worst case: no
// other request fails with it), then the rest of the wave. The same warm
// environment must handle them: its client's first connection failure
// has the cluster described again, the endpoint changed, so the client is
// dropped and the message's next delivery reaches the recreated cluster.
// Invariants only.
func TestWaveEndpointChanges(t *testing.T) {
	ctx, root, bootstrap := fleet.StartTest(t, 4*time.Minute)
	sb := sandbox.StartForTest(t, sandbox.Options{EKSAuth: &sandbox.EKSAuth{Cluster: fleet.DefaultCluster}})
	cluster, ok := sb.EKS()
	if !ok {
		t.Fatal("the sandbox runs without EKS authentication")
	}
	r := fleet.NewRig(ctx, t, root, bootstrap, sb, fleet.Spec{Nodes: 8, PodsPerNode: 4, SpotShare: 0.375, HookShare: 0.6, Replicas: 6, Seed: 10})
	proxy, err := fleet.StartEndpointProxy(cluster.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })
	old := cluster
	old.Endpoint = proxy.URL()
	// One environment, kept warm; retried messages come back after a
	// second or so instead of the queue's visibility timeout.
	dp := r.Deploy(t, fleet.Function{Cluster: cluster.Name, EKS: &old, MaxConcurrency: 1, Timeout: time.Minute,
		Env: []string{"DRAINPIPE_RETRY_DELAY=1s"}})

	first, lone, rest := phases(t, r.Fleet.Targets())
	sent := 0
	enqueue := func(nodes ...fleet.Node) {
		t.Helper()
		n, err := fleet.EnqueueNodes(r.Fake, nodes, dp.Queues()...)
		if err != nil {
			t.Fatal(err)
		}
		sent += n
		r.Settle(ctx, t, dp, nodes...)
	}
	r.Observer.Start()
	enqueue(first...)
	described := len(r.Fake.CallsTo("DescribeCluster"))
	if described == 0 || proxy.Accepted() == 0 {
		t.Fatalf("before the swap: %d DescribeCluster calls, %d connections through the old endpoint; want both > 0",
			described, proxy.Accepted())
	}

	swap := time.Now()
	if err := proxy.Close(); err != nil {
		t.Fatal(err)
	}
	fleet.RegisterEKS(r.Fake, cluster) // recreated: same name, new endpoint
	enqueue(lone)
	enqueue(rest...)
	r.CheckWave(t, dp, sent)
	// The lone event's first delivery fails on the old endpoint, which
	// has the cluster described again; its second must succeed.
	msgs, err := r.Fake.QueueMessages(dp.Queue)
	if err != nil || len(msgs) != sent {
		t.Fatalf("the queue holds %d messages of %d sent (%v)", len(msgs), sent, err)
	}
	if n := len(msgs[len(first)].Receives); n > 2 {
		t.Errorf("the lone event after the swap was received %d times, want at most 2", n)
	}

	if again := len(r.Fake.CallsTo("DescribeCluster")) - described; again == 0 {
		t.Errorf("DescribeCluster was not called after the endpoint changed")
	}
	invs, before := dp.Mapping.Invocations(), map[int]bool{}
	for _, inv := range invs {
		if inv.Start.Before(swap) {
			before[inv.Env] = true
		}
	}
	var warmAfter, coldAfter int
	for _, inv := range invs {
		switch {
		case inv.Start.Before(swap):
		case inv.Cold:
			coldAfter++
		case before[inv.Env]:
			warmAfter++
		}
	}
	// With one environment and no cold start after the swap, the new
	// DescribeCluster can only have come from the warm one.
	if warmAfter == 0 || coldAfter != 0 {
		t.Errorf("after the swap: %d invocations in a warm environment of before, %d cold starts; want > 0 and 0",
			warmAfter, coldAfter)
	}
}

// phases splits targets into the wave's parts: first a Spot warning and
// a terminate hook, then a lone hook, then the rest.
func phases(t *testing.T, targets []fleet.Node) (first []fleet.Node, lone fleet.Node, rest []fleet.Node) {
	t.Helper()
	var spot, hook []fleet.Node
	for _, n := range targets {
		if n.Hook != nil {
			hook = append(hook, n)
		} else {
			spot = append(spot, n)
		}
	}
	if len(spot) < 2 || len(hook) < 3 {
		t.Fatalf("the fleet has %d Spot and %d hooked targets; want at least 2 and 3", len(spot), len(hook))
	}
	first = []fleet.Node{spot[0], hook[0]}
	rest = append(append(rest, spot[1:]...), hook[2:]...)
	return first, hook[1], rest
}
