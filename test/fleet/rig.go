package fleet

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/lambdart"
	"github.com/drainpipe/drainpipe/test/sandbox"
)

// Rig is what fleet tests (the wave, fault scenarios) share: a built
// bootstrap, a fleet with deploy/rbac.yaml applied on a sandbox, the AWS
// fake and an observer (Start it just before the first enqueue):
//
//	ctx, root, bootstrap := fleet.StartTest(t, 4*time.Minute)
//	r := fleet.NewRig(ctx, t, root, bootstrap, sandbox.ForTest(t), spec)
//	dp := r.Deploy(t, fleet.Function{...})
//	r.Observer.Start(); sent, _ := r.Fleet.Enqueue(r.Fake, dp.Queues()...)
//	r.Settle(ctx, t, dp); r.CheckWave(t, dp, sent)
type Rig struct {
	Root, Bootstrap string
	Sandbox         *sandbox.Sandbox
	Admin           kubernetes.Interface
	Fake            *awsfake.Server
	Fleet           *Fleet
	Observer        *Observer
}

// StartTest skips a fleet test under -short; otherwise it returns the
// test's context, ending after timeout, the module root and the function
// built as the stack ships it.
func StartTest(t testing.TB, timeout time.Duration) (ctx context.Context, root, bootstrap string) {
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

// NewRig builds the fleet of spec on sb (one fleet per sandbox) with a
// fake of its own; both are stopped at cleanup.
func NewRig(ctx context.Context, t testing.TB, root, bootstrap string, sb *sandbox.Sandbox, spec Spec) *Rig {
	t.Helper()
	r := &Rig{Root: root, Bootstrap: bootstrap, Sandbox: sb, Fake: awsfake.New()}
	t.Cleanup(r.Fake.Close)
	var err error
	if r.Admin, err = kubernetes.NewForConfig(sb.RESTConfig()); err != nil {
		t.Fatal(err)
	}
	if err := ApplyRBAC(ctx, r.Admin, filepath.Join(root, "deploy", "rbac.yaml")); err != nil {
		t.Fatal(err)
	}
	if r.Fleet, err = Build(ctx, r.Admin, r.Fake, spec); err != nil {
		t.Fatal(err)
	}
	nodes, err := OwnConnection(sb.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	if r.Observer, err = r.Fleet.Observe(ctx, r.Admin, nodes); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Observer.Stop)
	return r
}

// Deploy starts the mapping running fn with the rig's bootstrap (the
// environments' output in the test log with -v) and stops it at cleanup.
func (r *Rig) Deploy(t testing.TB, fn Function) *Deployment {
	t.Helper()
	fn.Bootstrap = r.Bootstrap
	if testing.Verbose() {
		fn.Stdout = t.Output()
	}
	dp, err := Deploy(r.Fake, fn)
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

// Settle waits until nodes (every target when none) are drained and
// every message is deleted or dead-lettered; it fails t otherwise.
func (r *Rig) Settle(ctx context.Context, t testing.TB, dp *Deployment, nodes ...Node) {
	t.Helper()
	if err := r.Observer.WaitDrained(ctx, nodes...); err != nil {
		t.Errorf("waiting for the drains: %v (times %v)", err, r.Observer.Times())
	}
	for _, q := range dp.Queues() {
		if unsettled, err := WaitSettled(ctx, r.Fake, q); err != nil {
			t.Errorf("%d messages of %s neither deleted nor dead-lettered: %v", unsettled, q, err)
		}
	}
}

// CheckWave asserts the wave's invariants once settled: every target
// cordoned and drained, every hook completed exactly once, the
// dead-letter queue empty, one message per target.
func (r *Rig) CheckWave(t testing.TB, dp *Deployment, sent int) {
	t.Helper()
	for node, tm := range r.Observer.Times() {
		if tm.Cordoned == 0 || tm.Drained == 0 {
			t.Errorf("node %s: cordoned after %v, drained after %v (zero: never)", node, tm.Cordoned, tm.Drained)
		}
	}
	hooks, wantHooks := r.Fleet.HookState(r.Fake), 0
	for _, n := range r.Fleet.Targets() {
		if n.Hook != nil {
			wantHooks++
		}
	}
	if hooks.Completed != wantHooks || hooks.Double != 0 || hooks.Open != 0 || wantHooks == 0 {
		t.Errorf("hooks %+v, want all %d completed exactly once", hooks, wantHooks)
	}
	if dead, err := r.Fake.QueueMessages(dp.DLQ); err != nil || len(dead) != 0 {
		t.Errorf("dead-letter queue holds %d messages (%v)", len(dead), err)
	}
	if len(dp.Mapping.Invocations()) == 0 || sent != len(r.Fleet.Targets()) {
		t.Errorf("sent %d messages for %d targets in %d invocations", sent, len(r.Fleet.Targets()), len(dp.Mapping.Invocations()))
	}
}
