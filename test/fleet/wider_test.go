package fleet_test

import (
	"slices"
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/test/fleet"
	"github.com/drainpipe/drainpipe/test/sandbox"
)

// TestWaveWiderThanTheEventSource runs a wave three times wider than the
// event source takes at once (18 records, two environments, batches of
// three), with the function's defaults. Every node must be cordoned before
// any node is drained: an environment holds its batch only until its nodes
// are cordoned, then hands the drains to the records' redeliveries when
// messages wait behind it. An ordering, never a timing; the invariants of
// every wave hold too. It logs what the ordering costs: invocations, SQS
// and Kubernetes requests.
func TestWaveWiderThanTheEventSource(t *testing.T) {
	ctx, root, bootstrap := fleet.StartTest(t, 5*time.Minute)
	sb := sandbox.ForTest(t)
	r := fleet.NewRig(ctx, t, root, bootstrap, sb, fleet.Spec{Nodes: 24, PodsPerNode: 6, SpotShare: 0.5, HookShare: 0.5, Replicas: 8, Seed: 43})
	kubeconfig, err := fleet.DrainpipeUser.WriteKubeconfig(sb.KubeconfigPath(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dp := r.Deploy(t, fleet.Function{Kubeconfig: kubeconfig, Cluster: r.Fleet.Spec.Cluster, MaxConcurrency: 2, BatchSize: 3, Timeout: time.Minute})
	before, _, err := fleet.FlowCounts(ctx, r.Admin)
	if err != nil {
		t.Fatal(err)
	}

	r.Observer.Start()
	sent, err := r.Fleet.Enqueue(r.Fake, dp.Queue)
	if err != nil {
		t.Fatal(err)
	}
	r.Settle(ctx, t, dp)
	r.CheckWave(t, dp, sent)

	var lastCordon, firstDrain time.Duration
	var lastCordoned, firstDrained string
	for node, tm := range r.Observer.Times() {
		if tm.Cordoned > lastCordon {
			lastCordon, lastCordoned = tm.Cordoned, node
		}
		if tm.Drained != 0 && (firstDrain == 0 || tm.Drained < firstDrain) {
			firstDrain, firstDrained = tm.Drained, node
		}
	}
	if firstDrain < lastCordon {
		t.Errorf("node %s drained (%s) before node %s was cordoned (%s): a cordon waited for another node's drain",
			firstDrained, firstDrain.Round(time.Millisecond), lastCordoned, lastCordon.Round(time.Millisecond))
	}

	after, _, err := fleet.FlowCounts(ctx, r.Admin)
	if err != nil {
		t.Fatal(err)
	}
	invs := dp.Mapping.Invocations()
	attempts := 0
	for _, inv := range invs {
		attempts += inv.Messages
	}
	kube := map[string]int{} // Drainpipe's requests are global-default's without deploy/flowcontrol.yaml
	for schema, n := range after {
		if d := n - before[schema]; d > 0 && !slices.Contains([]string{"exempt", "probes"}, schema) {
			kube[schema] = d
		}
	}
	t.Logf("%d records: %d invocations, %d deliveries, SQS GetQueueAttributes %d, ChangeMessageVisibility %d; Kubernetes requests by flow schema %v; last cordon %s, first drained %s",
		sent, len(invs), attempts, len(r.Fake.CallsTo("GetQueueAttributes")), len(r.Fake.CallsTo("ChangeMessageVisibility"))+len(r.Fake.CallsTo("ChangeMessageVisibilityBatch")),
		kube, lastCordon.Round(time.Millisecond), firstDrain.Round(time.Millisecond))
}
