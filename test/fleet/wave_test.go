package fleet_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/fleet"
	"github.com/drainpipe/drainpipe/test/lambdart"
	"github.com/drainpipe/drainpipe/test/sandbox"
)

func TestMain(m *testing.M) { sandbox.Main(m) }

// TestWave runs a small spot wave end to end: Spot warnings and terminate
// hooks enqueued at once, the event source mapping running real bootstraps
// as Drainpipe's own user. It asserts the invariants only, never timings:
// every target node cordoned and drained, every hook completed exactly
// once, every message deleted, the dead-letter queue empty.
func TestWave(t *testing.T) {
	if testing.Short() {
		t.Skip("fleet test: sandbox and bootstrap; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	root, err := lambdart.ModuleRoot(ctx, ".")
	if err != nil {
		t.Fatal(err)
	}
	bootstrap := filepath.Join(t.TempDir(), "bootstrap")
	if err := (lambdart.Build{Dir: root, Package: "./lambda", Output: bootstrap, Strip: true}).Run(ctx); err != nil {
		t.Fatal(err)
	}
	sb := sandbox.ForTest(t)
	admin, err := kubernetes.NewForConfig(sb.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	fake := awsfake.New()
	t.Cleanup(fake.Close)
	if err := fleet.ApplyRBAC(ctx, admin, filepath.Join(root, "deploy", "rbac.yaml")); err != nil {
		t.Fatal(err)
	}
	f, err := fleet.Build(ctx, admin, fake, fleet.Spec{Nodes: 12, PodsPerNode: 8, SpotShare: 0.5, HookShare: 0.5, Replicas: 8, Seed: 16})
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := fleet.DrainpipeUser.WriteKubeconfig(sb.KubeconfigPath(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fn := fleet.Function{Bootstrap: bootstrap, Kubeconfig: kubeconfig, Cluster: f.Spec.Cluster, MaxConcurrency: 3, Timeout: time.Minute}
	if testing.Verbose() {
		fn.Stdout = t.Output()
	}
	dp, err := fleet.Deploy(fake, fn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := dp.Stop(); err != nil {
			t.Errorf("stopping the mapping: %v", err)
		}
	})
	obs, err := f.Observe(ctx, admin)
	if err != nil {
		t.Fatal(err)
	}
	defer obs.Stop()

	obs.Start()
	sent, err := f.Enqueue(fake, dp.Queue)
	if err != nil {
		t.Fatal(err)
	}
	if err := obs.WaitDrained(ctx); err != nil {
		t.Errorf("waiting for the drains: %v (times %v)", err, obs.Times())
	}
	var unsettled int
	err = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(context.Context) (bool, error) {
		unsettled, err = fleet.Unsettled(fake, dp.Queue)
		return unsettled == 0, err
	})
	if err != nil {
		t.Errorf("%d of %d messages neither deleted nor dead-lettered: %v", unsettled, sent, err)
	}

	for node, tm := range obs.Times() {
		if tm.Cordoned == 0 || tm.Drained == 0 {
			t.Errorf("node %s: cordoned after %v, drained after %v (zero: never)", node, tm.Cordoned, tm.Drained)
		}
	}
	hooks, wantHooks := f.HookState(fake), 0
	for _, n := range f.Targets() {
		if n.Hook != nil {
			wantHooks++
		}
	}
	if hooks.Completed != wantHooks || hooks.Double != 0 || hooks.Open != 0 || wantHooks == 0 {
		t.Errorf("hooks %+v, want all %d completed exactly once", hooks, wantHooks)
	}
	if dead, err := fake.QueueMessages(dp.DLQ); err != nil || len(dead) != 0 {
		t.Errorf("dead-letter queue holds %d messages (%v)", len(dead), err)
	}
	if len(dp.Mapping.Invocations()) == 0 || sent != len(f.Targets()) {
		t.Errorf("sent %d messages for %d targets in %d invocations", sent, len(f.Targets()), len(dp.Mapping.Invocations()))
	}
}
