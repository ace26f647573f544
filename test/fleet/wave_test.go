package fleet_test

import (
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/test/fleet"
	"github.com/drainpipe/drainpipe/test/sandbox"
)

func TestMain(m *testing.M) { sandbox.Main(m) }

// TestWave runs a small spot wave end to end: Spot warnings and terminate
// hooks enqueued at once, the event source mapping running real bootstraps
// as Drainpipe's own user. It asserts the invariants only, never timings:
// every target node cordoned and drained, every hook completed exactly
// once, every message deleted, the dead-letter queue empty.
func TestWave(t *testing.T) {
	ctx, root, bootstrap := fleet.StartTest(t, 4*time.Minute)
	sb := sandbox.ForTest(t)
	r := fleet.NewRig(ctx, t, root, bootstrap, sb, fleet.Spec{Nodes: 12, PodsPerNode: 8, SpotShare: 0.5, HookShare: 0.5, Replicas: 8, Seed: 16})
	kubeconfig, err := fleet.DrainpipeUser.WriteKubeconfig(sb.KubeconfigPath(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dp := r.Deploy(t, fleet.Function{Kubeconfig: kubeconfig, Cluster: r.Fleet.Spec.Cluster, MaxConcurrency: 3, Timeout: time.Minute})

	r.Observer.Start()
	sent, err := r.Fleet.Enqueue(r.Fake, dp.Queues()...)
	if err != nil {
		t.Fatal(err)
	}
	r.Settle(ctx, t, dp)
	r.CheckWave(t, dp, sent)
}
