// Package chaos runs Drainpipe's fault matrix on the fleet rig: a wave of
// Spot warnings and terminate hooks through the modelled SQS queue and the
// event source mapping's real bootstraps, on a sandbox control plane,
// with one fault injected while the drains run. After each scenario it
// checks Drainpipe's promises from the queue model, the Auto Scaling
// fake's record and the API server: no message unaccounted for, no hook
// completed while its node still had evictable pods (but on its record's
// last delivery), none completed twice, none left open, every node that
// could be drained drained in time.
package chaos

import (
	"context"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/fleet"
	"github.com/drainpipe/drainpipe/test/sandbox"
)

// Scenario is one fault injected into one wave.
type Scenario struct {
	Name     string
	Spec     fleet.Spec     // the fleet; DefaultSpec's shape when zero
	Function fleet.Function // Bootstrap, Kubeconfig and Cluster are set by Run
	// Sandbox is the control plane's options (a fault may need its own
	// API server flags); Run's caller starts it.
	Sandbox sandbox.Options
	// Setup prepares the rig and the function before the wave (e.g.
	// injects AWS faults that must be there from the first call).
	Setup func(ctx context.Context, r *Rig, fn *fleet.Function) error
	// Fault runs once the wave is enqueued; the scenario ends when it
	// has returned and every message is settled.
	Fault func(ctx context.Context, r *Rig) error
	// DeadLetters, when set, lets messages end in the dead-letter queue
	// (a fault that outlasts every delivery); otherwise one is a problem.
	DeadLetters bool
	// Bound is how long the wave may take to settle; default 6 minutes.
	Bound time.Duration
}

// Env is what every scenario shares.
type Env struct {
	Bootstrap string    // a bootstrap built for this machine
	RBAC      string    // deploy/rbac.yaml
	Dir       string    // for kubeconfigs
	Stdout    io.Writer // the bootstraps' output; nil keeps it in memory
	// Setup, when set, bounds how many scenarios build their rig at once
	// (a slot is a value in the channel): starting many control planes
	// and fleets together starves the bootstraps' start.
	Setup chan struct{}
	// Parallel bounds how many scenarios run at once; 0 means runSlots.
	Parallel int
}

// Rig is a running scenario: what a fault may act on.
type Rig struct {
	Sandbox    *sandbox.Sandbox
	Admin      kubernetes.Interface
	Fake       *awsfake.Server
	Fleet      *fleet.Fleet
	Deployment *fleet.Deployment
	Observer   *fleet.Observer
	checker    *checker
	notes      []string
}

// Note records a fact of the fault (what was killed, how much was
// rejected) for the scenario's row.
func (r *Rig) Note(format string, args ...any) {
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

// DefaultSpec is the CI-sized fleet: eight nodes of six pods; two get a
// Spot warning, three a terminate hook (expiring without a heartbeat
// within a minute), three stay to take the evicted pods.
func DefaultSpec() fleet.Spec {
	return fleet.Spec{Nodes: 8, PodsPerNode: 6, SpotShare: 0.25, HookShare: 0.5, Replicas: 8, Seed: 17,
		LongGrace: 8 * time.Second, HeartbeatTimeout: time.Minute}
}

// DefaultFunction is the deployment every scenario starts from: retries
// come back after 5 s, doubling (the stack's 15 s would make the matrix
// slow), six deliveries, and a visibility timeout equal to the function
// timeout, so a killed batch returns within the wave. The retry window
// outlasts the two minutes a disruption budget may count a pod whose
// eviction was accepted but whose deletion a fault cut short.
func DefaultFunction() fleet.Function {
	return fleet.Function{MaxConcurrency: 3, Timeout: 30 * time.Second, Visibility: 30 * time.Second,
		MaxReceiveCount: 6, Env: []string{"DRAINPIPE_RETRY_DELAY=5s"}}
}

// Run builds the scenario's fleet on sb, sends the wave, injects the fault
// and returns what the invariants found. An error is the rig's own
// failure, not a broken invariant.
func Run(ctx context.Context, sb *sandbox.Sandbox, sc Scenario, env Env) (Result, error) {
	start := time.Now()
	if sc.Spec.Nodes == 0 {
		sc.Spec = DefaultSpec()
	}
	if sc.Bound == 0 {
		sc.Bound = 6 * time.Minute
	}
	if env.Setup != nil {
		env.Setup <- struct{}{}
	}
	r, err := setUp(ctx, sb, sc, env)
	if env.Setup != nil {
		<-env.Setup
	}
	if err != nil {
		return Result{}, err
	}
	defer r.Fake.Close()
	defer r.Observer.Stop()
	stopped := false
	defer func() {
		if !stopped {
			_ = r.Deployment.Stop()
		}
	}()

	wctx, cancel := context.WithTimeout(ctx, sc.Bound)
	defer cancel()
	r.Observer.Start()
	sent, err := r.Fleet.Enqueue(r.Fake, r.Deployment.Queues()...)
	if err != nil {
		return Result{}, err
	}
	var faultErr error
	if sc.Fault != nil {
		faultErr = sc.Fault(wctx, r)
	}
	settleErr := r.WaitSettled(wctx)
	// Drains the messages ended are seen by the watch a moment later.
	dctx, dcancel := context.WithTimeout(ctx, 30*time.Second)
	_ = r.Observer.WaitDrained(dctx, r.drainable()...)
	dcancel()
	stopped = true
	stopErr := r.Deployment.Stop()
	outcomes := map[string]int{}
	for _, inv := range r.Deployment.Mapping.Invocations() {
		outcomes[inv.Outcome]++
	}
	r.Note("invocations by outcome %v", outcomes)
	res := r.result(sc.Name, sent, time.Since(start))
	if res.DLQ > 0 && !sc.DeadLetters {
		res.Problems = append(res.Problems, fmt.Sprintf("%d messages dead-lettered", res.DLQ))
	}
	res.Notes = r.notes
	if faultErr != nil {
		res.Problems = append(res.Problems, "fault: "+faultErr.Error())
	}
	if settleErr != nil {
		res.Problems = append(res.Problems, fmt.Sprintf("messages not settled within %s: %v", sc.Bound, settleErr))
	}
	if stopErr != nil {
		res.Problems = append(res.Problems, "stopping the mapping: "+stopErr.Error())
	}
	if !res.OK() {
		logs := r.Deployment.Mapping.Logs()
		res.LogTail = logs[max(0, len(logs)-80):]
	}
	return res, nil
}

// setUp builds the fleet, deploys Drainpipe and starts the observer.
func setUp(ctx context.Context, sb *sandbox.Sandbox, sc Scenario, env Env) (*Rig, error) {
	admin, err := kubernetes.NewForConfig(sb.RESTConfig())
	if err != nil {
		return nil, err
	}
	r := &Rig{Sandbox: sb, Admin: admin, Fake: awsfake.New()}
	if err := r.build(ctx, sc, env); err != nil {
		if r.Observer != nil {
			r.Observer.Stop()
		}
		r.Fake.Close()
		return nil, err
	}
	return r, nil
}

func (r *Rig) build(ctx context.Context, sc Scenario, env Env) error {
	if err := fleet.ApplyRBAC(ctx, r.Admin, env.RBAC); err != nil {
		return err
	}
	var err error
	if r.Fleet, err = fleet.Build(ctx, r.Admin, r.Fake, sc.Spec); err != nil {
		return fmt.Errorf("building the fleet: %w", err)
	}
	fn := sc.Function
	if fn.Timeout == 0 {
		fn = DefaultFunction()
	}
	fn.Bootstrap, fn.Cluster, fn.Stdout = env.Bootstrap, r.Fleet.Spec.Cluster, env.Stdout
	if fn.Kubeconfig, err = fleet.DrainpipeUser.WriteKubeconfig(r.Sandbox.KubeconfigPath(), env.Dir); err != nil {
		return err
	}
	nodes, err := fleet.OwnConnection(r.Sandbox.RESTConfig())
	if err != nil {
		return err
	}
	if r.Observer, err = r.Fleet.Observe(ctx, r.Admin, nodes); err != nil {
		return err
	}
	if sc.Setup != nil {
		if err := sc.Setup(ctx, r, &fn); err != nil {
			return fmt.Errorf("setting up: %w", err)
		}
	}
	if r.Deployment, err = fleet.Deploy(r.Fake, fn); err != nil {
		return err
	}
	r.checker = watchCompletions(r)
	return nil
}

// WaitSettled waits until every message is deleted or dead-lettered.
func (r *Rig) WaitSettled(ctx context.Context) error {
	_, err := fleet.WaitSettled(ctx, r.Fake, r.Deployment.Queue)
	return err
}

// WaitCordoned waits until n target nodes are cordoned: a fault that must
// strike mid-drain waits for the wave to be under way.
func (r *Rig) WaitCordoned(ctx context.Context, n int) error {
	return wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
		k := 0
		for _, t := range r.Observer.Times() {
			if t.Cordoned > 0 {
				k++
			}
		}
		return k >= n, nil
	})
}

// drainable lists the targets that can be drained (not blocked).
func (r *Rig) drainable() []fleet.Node {
	var out []fleet.Node
	for _, n := range r.Fleet.Targets() {
		if !n.Blocked {
			out = append(out, n)
		}
	}
	return out
}
