package fleet_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/test/fleet"
	"github.com/drainpipe/drainpipe/test/sandbox"
)

// TestWaveWiderThanTheEventSource runs a wave three times wider than the
// work queue's event source takes at once (18 records, two environments,
// batches of three), with the function's defaults, with and without the
// cordon queue. Every node must be cordoned before any batch is drained
// to its end, but for a batch whose drains all ended within its first
// pass: the cordon queue's copies cordon every node at once; without
// them, an environment holds its batch only until its nodes are cordoned
// and their first evictions sent, then hands the drains to the records'
// redeliveries when messages wait behind it. An ordering, never a timing;
// the invariants of every wave hold too. It logs what the ordering costs:
// invocations, SQS and Kubernetes requests.
func TestWaveWiderThanTheEventSource(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cordon int
	}{{"one queue", -1}, {"cordon queue", 2}} {
		t.Run(tc.name, func(t *testing.T) { waveWider(t, tc.cordon) })
	}
}

func waveWider(t *testing.T, cordonConcurrency int) {
	ctx, root, bootstrap := fleet.StartTest(t, 5*time.Minute)
	sb := sandbox.StartForTest(t, sandbox.Options{}) // its own: one fleet per sandbox
	r := fleet.NewRig(ctx, t, root, bootstrap, sb, fleet.Spec{Nodes: 24, PodsPerNode: 6, SpotShare: 0.5, HookShare: 0.5, Replicas: 8, Seed: 43})
	kubeconfig, err := fleet.DrainpipeUser.WriteKubeconfig(sb.KubeconfigPath(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dp := r.Deploy(t, fleet.Function{Kubeconfig: kubeconfig, Cluster: r.Fleet.Spec.Cluster, MaxConcurrency: 2, BatchSize: 3, Timeout: time.Minute,
		CordonConcurrency: cordonConcurrency})
	before, _, err := fleet.FlowCounts(ctx, r.Admin)
	if err != nil {
		t.Fatal(err)
	}

	zero := r.Observer.Start()
	sent, err := r.Fleet.Enqueue(r.Fake, dp.Queues()...)
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
	// Invocations that drained their whole batch before the last cordon:
	// that cordon waited for their drains, unless those drains ended
	// within the batch's first pass, before it would have given way (as
	// its "batch handled" line says: give_way).
	cordonedAt := zero.Add(lastCordon)
	whole := 0
	for _, inv := range dp.Mapping.Invocations() {
		if end := inv.Start.Add(inv.Duration); inv.Messages > 0 && inv.Failed == 0 && inv.Outcome == "ok" && end.Before(cordonedAt) {
			whole++
		}
	}
	quick := batchesDrainedInTheirFirstPass(t, dp.Mapping.Logs(), cordonedAt)
	if whole > quick {
		t.Errorf("node %s was cordoned (%s) after %d environments had drained a whole batch, %d of them within the first pass: a cordon waited for other nodes' drains",
			lastCordoned, lastCordon.Round(time.Millisecond), whole, quick)
	}

	if dp.CordonMapping != nil {
		for _, inv := range dp.CordonMapping.Invocations() {
			if inv.Failed > 0 || inv.Outcome != "ok" {
				t.Errorf("a cordon queue's invocation ended %s with %d records to retry: copies are never retried", inv.Outcome, inv.Failed)
			}
		}
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
	t.Logf("%d records: %d invocations, %d deliveries, SQS GetQueueAttributes %d, ChangeMessageVisibility %d; Kubernetes requests by flow schema %v; last cordon %s, first drained %s; %d batches drained whole before the last cordon, %d within their first pass",
		sent, len(invs), attempts, len(r.Fake.CallsTo("GetQueueAttributes")), len(r.Fake.CallsTo("ChangeMessageVisibility"))+len(r.Fake.CallsTo("ChangeMessageVisibilityBatch")),
		kube, lastCordon.Round(time.Millisecond), firstDrain.Round(time.Millisecond), whole, quick)
}

// batchesDrainedInTheirFirstPass counts the batches that said, before
// at, that their drains ended within the first pass.
func batchesDrainedInTheirFirstPass(t *testing.T, lines []string, at time.Time) int {
	t.Helper()
	n := 0
	for _, l := range lines {
		var m struct {
			Time    time.Time `json:"time"`
			Msg     string    `json:"msg"`
			GiveWay string    `json:"give_way"`
		}
		if json.Unmarshal([]byte(l), &m) == nil && m.Msg == "batch handled" && m.GiveWay == "drains ended in the first pass" && m.Time.Before(at) {
			n++
		}
	}
	return n
}
