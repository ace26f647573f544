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
// any batch is drained to its end: an environment holds its batch only
// until its nodes are cordoned and their first evictions sent, then hands
// the drains to the records' redeliveries when messages wait behind it. An
// ordering, never a timing; the invariants of every wave hold too. It logs what the ordering costs: invocations, SQS
// and Kubernetes requests.
func TestWaveWiderThanTheEventSource(t *testing.T) {
	ctx, root, bootstrap := fleet.StartTest(t, 5*time.Minute)
	sb := sandbox.StartForTest(t, sandbox.Options{}) // its own: one fleet per sandbox
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

	zero := r.Observer.Start()
	sent, err := r.Fleet.Enqueue(r.Fake, dp.Queue)
	if err != nil {
		t.Fatal(err)
	}
	r.Settle(ctx, t, dp)
	r.CheckWave(t, dp, sent)

	var lastCordon, firstDrain time.Duration
	var lastCordoned string
	for node, tm := range r.Observer.Times() {
		if tm.Cordoned > lastCordon {
			lastCordon, lastCordoned = tm.Cordoned, node
		}
		if tm.Drained != 0 && (firstDrain == 0 || tm.Drained < firstDrain) {
			firstDrain = tm.Drained
		}
	}
	// The first invocation that drained its whole batch: a cordon after
	// its end waited for a drain.
	var firstWhole time.Time
	for _, inv := range dp.Mapping.Invocations() {
		if end := inv.Start.Add(inv.Duration); inv.Messages > 0 && inv.Failed == 0 && inv.Outcome == "ok" && (firstWhole.IsZero() || end.Before(firstWhole)) {
			firstWhole = end
		}
	}
	if cordonedAt := zero.Add(lastCordon); !firstWhole.IsZero() && cordonedAt.After(firstWhole) {
		t.Errorf("node %s was cordoned (%s) after an environment had drained a whole batch: a cordon waited for other nodes' drains",
			lastCordoned, lastCordon.Round(time.Millisecond))
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
