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

// rig is what the wave tests share: a built bootstrap, a fleet with
// deploy/rbac.yaml applied on a sandbox, the AWS fake and an observer
// (started by the test, just before its first enqueue).
type rig struct {
	root, bootstrap string
	sb              *sandbox.Sandbox
	admin           kubernetes.Interface
	fake            *awsfake.Server
	fleet           *fleet.Fleet
	obs             *fleet.Observer
}

// startWave skips a wave test under -short; otherwise it returns the
// test's context, ending after timeout, and builds the function as the
// stack ships it.
func startWave(t *testing.T, timeout time.Duration) (ctx context.Context, root, bootstrap string) {
	t.Helper()
	if testing.Short() {
		t.Skip("fleet test: sandbox and bootstrap; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	t.Cleanup(cancel)
	root, err := lambdart.ModuleRoot(ctx, ".")
	if err != nil {
		t.Fatal(err)
	}
	bootstrap = filepath.Join(t.TempDir(), "bootstrap")
	if err := (lambdart.Build{Dir: root, Package: "./lambda", Output: bootstrap, Strip: true}).Run(ctx); err != nil {
		t.Fatal(err)
	}
	return ctx, root, bootstrap
}

// newRig builds the fleet of spec on sb.
func newRig(ctx context.Context, t *testing.T, root, bootstrap string, sb *sandbox.Sandbox, spec fleet.Spec) *rig {
	t.Helper()
	r := &rig{root: root, bootstrap: bootstrap, sb: sb, fake: awsfake.New()}
	t.Cleanup(r.fake.Close)
	var err error
	if r.admin, err = kubernetes.NewForConfig(sb.RESTConfig()); err != nil {
		t.Fatal(err)
	}
	if err := fleet.ApplyRBAC(ctx, r.admin, filepath.Join(root, "deploy", "rbac.yaml")); err != nil {
		t.Fatal(err)
	}
	if r.fleet, err = fleet.Build(ctx, r.admin, r.fake, spec); err != nil {
		t.Fatal(err)
	}
	if r.obs, err = r.fleet.Observe(ctx, r.admin); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.obs.Stop)
	return r
}

// deploy starts the mapping running fn (the rig's bootstrap, the
// environments' output in the test log with -v) and stops it at cleanup.
func (r *rig) deploy(t *testing.T, fn fleet.Function) *fleet.Deployment {
	t.Helper()
	fn.Bootstrap = r.bootstrap
	if testing.Verbose() {
		fn.Stdout = t.Output()
	}
	dp, err := fleet.Deploy(r.fake, fn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := dp.Stop(); err != nil {
			t.Errorf("stopping the mapping: %v", err)
		}
	})
	return dp
}

// settle waits until nodes (every target when none) are drained and
// every message is deleted or dead-lettered.
func (r *rig) settle(ctx context.Context, t *testing.T, dp *fleet.Deployment, nodes ...fleet.Node) {
	t.Helper()
	if err := r.obs.WaitDrained(ctx, nodes...); err != nil {
		t.Errorf("waiting for the drains: %v (times %v)", err, r.obs.Times())
	}
	var unsettled int
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(context.Context) (bool, error) {
		var err error
		unsettled, err = fleet.Unsettled(r.fake, dp.Queue)
		return unsettled == 0, err
	})
	if err != nil {
		t.Errorf("%d messages neither deleted nor dead-lettered: %v", unsettled, err)
	}
}

// checkWave asserts the wave's invariants once settled: every target
// cordoned and drained, every hook completed exactly once, the
// dead-letter queue empty, one message per target.
func (r *rig) checkWave(t *testing.T, dp *fleet.Deployment, sent int) {
	t.Helper()
	for node, tm := range r.obs.Times() {
		if tm.Cordoned == 0 || tm.Drained == 0 {
			t.Errorf("node %s: cordoned after %v, drained after %v (zero: never)", node, tm.Cordoned, tm.Drained)
		}
	}
	hooks, wantHooks := r.fleet.HookState(r.fake), 0
	for _, n := range r.fleet.Targets() {
		if n.Hook != nil {
			wantHooks++
		}
	}
	if hooks.Completed != wantHooks || hooks.Double != 0 || hooks.Open != 0 || wantHooks == 0 {
		t.Errorf("hooks %+v, want all %d completed exactly once", hooks, wantHooks)
	}
	if dead, err := r.fake.QueueMessages(dp.DLQ); err != nil || len(dead) != 0 {
		t.Errorf("dead-letter queue holds %d messages (%v)", len(dead), err)
	}
	if len(dp.Mapping.Invocations()) == 0 || sent != len(r.fleet.Targets()) {
		t.Errorf("sent %d messages for %d targets in %d invocations", sent, len(r.fleet.Targets()), len(dp.Mapping.Invocations()))
	}
}
