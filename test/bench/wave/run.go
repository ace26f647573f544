package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/kubewire"
	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/bench/wave/floor"
	"github.com/drainpipe/drainpipe/test/fleet"
	"github.com/drainpipe/drainpipe/test/lambdart"
	"github.com/drainpipe/drainpipe/test/sandbox"
)

// peers: how each run is deployed. Drainpipe runs with the shipped
// flow-control manifest and without it; the floor acts as Drainpipe too.
var peers = map[string]struct {
	flowControl bool
	flowSchemas []string // where APF files the run's requests
}{
	"drainpipe":      {true, drainpipeSchemas},
	"drainpipe-nofc": {false, []string{"global-default"}},
	"nth":            {true, []string{"service-accounts"}},
	"floor":          {true, drainpipeSchemas},
	"floor-inproc":   {true, drainpipeSchemas},
	"floor-2q":       {true, drainpipeSchemas},
	"paced":          {true, drainpipeSchemas},
	"limit":          {true, []string{"exempt"}},
}

// handlerOf is the identity whose calls a peer's requests line itemises:
// NTH's service account for nth, user drainpipe for the others (the
// floor's drain and the limit act as the sandbox's admin and are counted
// under its name, not itemised).
func handlerOf(peer string) string {
	if peer == "nth" {
		return fleet.NTHUser.User
	}
	return fleet.DrainpipeUser.User
}

// drainpipeSchemas are deploy/flowcontrol.yaml's FlowSchemas.
var drainpipeSchemas = []string{"drainpipe-nodes", "drainpipe"}

// runOne measures one peer on a fresh sandbox and fleet.
func runOne(ctx context.Context, log *slog.Logger, o options, peer string) (*result, error) {
	how, ok := peers[peer]
	if !ok {
		return nil, fmt.Errorf("unknown peer %q (drainpipe, drainpipe-nofc, nth, floor, floor-inproc, floor-2q, paced, limit)", peer)
	}
	began := time.Now()
	auditDir, err := os.MkdirTemp("", "bench-wave-audit-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(auditDir)
	flags, auditLog, err := auditFlags(auditDir, o.requests)
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	sb, err := sandbox.Start(sctx, sandbox.Options{Logger: log, APIServerFlags: flags})
	cancel()
	if err != nil {
		return nil, fmt.Errorf("starting sandbox: %w", err)
	}
	defer func() {
		if err := sb.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "bench-wave: stopping sandbox:", err)
		}
	}()
	rc := sb.RESTConfig()
	rc.QPS, rc.Burst = -1, 0
	admin, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("creating admin client: %w", err)
	}
	fake := awsfake.New()
	defer fake.Close()
	if err := fleet.ApplyRBAC(ctx, admin, o.rbac); err != nil {
		return nil, err
	}
	if how.flowControl {
		if _, _, err := fleet.ApplyFlowControl(ctx, admin, o.flowControl); err != nil {
			return nil, err
		}
	}
	bctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	f, err := fleet.Build(bctx, admin, fake, fleet.Spec{
		Nodes: o.nodes, PodsPerNode: o.pods, SpotShare: o.spot, HookShare: o.hooks, Replicas: o.replicas, Seed: 16,
		// The groups' hooks exist, as in AWS, with Auto Scaling's default
		// heartbeat timeout: the function describes them, as it would there.
		HeartbeatTimeout: time.Hour,
	})
	cancel()
	if err != nil {
		return nil, err
	}
	r := &result{targets: len(f.Targets()), bound: o.bound}
	var loads []budgetLoad
	if isFloor(peer) {
		if r.cycle, err = measureCycle(ctx, admin, f, cycleSamples); err != nil {
			return nil, err
		}
		if r.rate, err = measureRate(ctx, admin, f, rateSamplePods); err != nil {
			return nil, err
		}
		if loads, err = budgetLoads(ctx, admin, f); err != nil {
			return nil, err
		}
	}
	if peer == "paced" { // its pace
		if r.rate, err = measureRate(ctx, admin, f, rateSamplePods); err != nil {
			return nil, err
		}
	}
	podNode, err := podsOnTargets(ctx, admin, f)
	if err != nil {
		return nil, err
	}
	nodes, err := fleet.OwnConnection(rc)
	if err != nil {
		return nil, err
	}
	obs, err := f.Observe(ctx, admin, nodes)
	if err != nil {
		return nil, err
	}
	defer obs.Stop()
	r.setup = time.Since(began)
	rctx, cancel := context.WithTimeout(ctx, o.bound)
	defer cancel()
	var queues []string // the rules' targets: the work queue first
	var dlq string
	var stop func() error
	switch peer {
	case "drainpipe", "drainpipe-nofc":
		kc, err := fleet.DrainpipeUser.WriteKubeconfig(sb.KubeconfigPath(), sb.Dir())
		if err != nil {
			return nil, err
		}
		bootstrap, err := filepath.Abs(o.bootstrap)
		if err != nil {
			return nil, err
		}
		dp, err := fleet.Deploy(fake, fleet.Function{
			Bootstrap: bootstrap, Kubeconfig: kc, Cluster: f.Spec.Cluster, BatchSize: o.batch, BatchWindow: o.window,
			MaxConcurrency: o.concurrency, CordonConcurrency: o.cordonConcurrency, Timeout: o.timeout,
			Stdout: output(o.verbose), Env: settings(o.env),
		})
		if err != nil {
			return nil, err
		}
		queues, dlq, stop = dp.Queues(), dp.DLQ, dp.Stop
		defer r.bill(o.memoryMB, dp.Mapping, dp.CordonMapping) // after awsCalls
	case "floor", "floor-inproc", "floor-2q":
		// One queue with as many environments as Drainpipe's two: its
		// batches cordon and end at once, so it needs no second one.
		fn := fleet.Function{Cluster: f.Spec.Cluster, BatchSize: o.batch, BatchWindow: o.window,
			MaxConcurrency: o.concurrency + max(0, o.cordonConcurrency), CordonConcurrency: -1, Timeout: o.timeout}
		if peer == "floor-2q" { // Drainpipe's two queues: every notice cordoned twice
			fn.MaxConcurrency, fn.CordonConcurrency = o.concurrency, o.cordonConcurrency
		}
		if peer != "floor-inproc" { // a real bootstrap: the cold start every serverless handler has
			if fn.Bootstrap, fn.Kubeconfig, err = floorBootstrap(ctx, sb); err != nil {
				return nil, err
			}
		} else { // in process: the event source's delivery, the lookup and the PATCH alone
			drc := fleet.DrainpipeUser.Config(sb.RESTConfig())
			kubewire.Tune(drc, -1, 0) // Drainpipe's client settings, unthrottled
			dc, err := kubernetes.NewForConfig(drc)
			if err != nil {
				return nil, fmt.Errorf("creating the floor's client: %w", err)
			}
			fn.Func = floor.Func(ec2.NewFromConfig(fake.Config()), dc)
		}
		dp, err := fleet.Deploy(fake, fn)
		if err != nil {
			return nil, err
		}
		queues, dlq, stop = dp.Queues(), dp.DLQ, dp.Stop
		defer r.bill(o.memoryMB, dp.Mapping, dp.CordonMapping) // after awsCalls
	case "nth":
		queue, nthDLQ, err := fleet.Queues(fake, o.timeout, 5)
		if err != nil {
			return nil, err
		}
		queues, dlq = []string{queue}, nthDLQ
		done := make(chan error, 1)
		go func() { done <- nth(rctx, sb.RESTConfig(), fake, queue) }()
		stop = func() error { cancel(); return <-done }
	case "limit", "paced":
		stop = func() error { return nil }
	}

	var once sync.Once
	var stopErr error
	halt := func() error { once.Do(func() { stopErr = stop() }); return stopErr }
	defer halt() // on early returns too: no bootstrap outlives the run

	if r.settled, r.quiet, err = settle(ctx, sb.PIDs()); err != nil {
		return nil, err
	}
	apf0, err := fleet.APFRejected(ctx, admin)
	if err != nil {
		return nil, err
	}
	disp0, rej0, err := fleet.FlowCounts(ctx, admin)
	if err != nil {
		return nil, err
	}
	why0, err := fleet.Rejections(ctx, admin)
	if err != nil {
		return nil, err
	}
	waits0, err := readQueueWaits(ctx, admin)
	if err != nil {
		return nil, err
	}
	stopNeighbour, err := startNeighbour(ctx, admin, sb.RESTConfig())
	if err != nil {
		return nil, err
	}
	sent := obs.Start()
	var stopReclaim func() error = func() error { return nil }
	if o.reclaim {
		stopReclaim = f.Reclaim(rctx, admin, fake, obs, sent)
	}
	if o.verbose { // beside the bootstraps' lines, to time them from the wave's start
		fmt.Fprintf(output(true), "{\"time\":%q,\"msg\":\"bench: wave sent\",\"peer\":%q}\n", time.Now().UTC().Format(time.RFC3339Nano), peer)
	}
	if len(queues) > 0 {
		if _, err := f.EnqueueAt(fake, sent, queues...); err != nil {
			stopNeighbour()
			_ = stopReclaim()
			return nil, err
		}
	} else {
		startStrategy(rctx, sb, admin, f, peer, r.rate)
	}
	var waitErr error
	if cordons(peer) {
		r.cordonOnly = peer == "floor-2q" || !o.floorDrain // floor-2q is a cordon reference only
		if waitErr = waitCordoned(rctx, obs); waitErr == nil && !r.cordonOnly {
			if waitErr = drainBest(rctx, admin, f); waitErr == nil {
				waitErr = obs.WaitDrained(rctx)
			}
		}
	} else {
		waitErr = obs.WaitDrained(rctx)
	}
	if waitErr != nil && o.verbose {
		reportUndrained(ctx, output(true), admin, f, obs)
	}
	for _, q := range queues { // the hooks are completed after the drains
		if waitErr == nil {
			waitSettled(rctx, fake, q)
		}
	}
	r.neighbour = stopNeighbour()
	if err := stopReclaim(); err != nil {
		return nil, err
	}
	if err := halt(); err != nil {
		return nil, err
	}
	if o.requests {
		rc, err := waveRequests(auditLog, sent, time.Now(), handlerOf(peer))
		if err != nil {
			return nil, err
		}
		fmt.Printf("bench requests %s: %s\n", peer, rc)
	}
	targets := map[string]bool{}
	for _, n := range f.Targets() {
		targets[n.Name] = true
	}
	commits, err := cordonCommits(auditLog, sent, targets)
	if err != nil {
		return nil, err
	}
	if o.verbose {
		for name, at := range commits {
			fmt.Fprintf(output(true), "{\"msg\":\"bench: cordon committed\",\"peer\":%q,\"node\":%q,\"after_s\":%.3f}\n", peer, name, at.Seconds())
		}
	}
	deleted, err := deletedPastBudget(auditLog, sent, f.Namespace, podNode)
	if err != nil {
		return nil, err
	}
	if _, err := r.fill(ctx, admin, fake, f, obs, commits, deleted, dlq, apf0); err != nil {
		return nil, err
	}
	disp1, rej1, err := fleet.FlowCounts(ctx, admin)
	if err != nil {
		return nil, err
	}
	waits1, err := readQueueWaits(ctx, admin)
	if err != nil {
		return nil, err
	}
	why1, err := fleet.Rejections(ctx, admin)
	if err != nil {
		return nil, err
	}
	for k, n := range why1 {
		if d := n - why0[k]; d > 0 {
			if r.apfWhy == nil {
				r.apfWhy = map[string]int{}
			}
			r.apfWhy[k] = d
		}
	}
	if how.flowControl {
		r.nodeLevel = waits1.since(waits0, "drainpipe-nodes")
		r.level = waits1.since(waits0, "drainpipe")
	}
	r.cost.nodes = r.targets
	for _, fs := range how.flowSchemas {
		r.cost.kube += disp1[fs] - disp0[fs] + rej1[fs] - rej0[fs]
	}
	if how.flowSchemas[0] == "global-default" { // shared with the neighbour, who counted its own
		r.cost.kube -= r.neighbour.requests
	}
	r.cost.ec2, r.cost.asg, r.cost.sqs = awsCalls(fake)
	r.cost.cordonOnly = cordons(peer)
	if isFloor(peer) {
		r.floor(loads)
	}
	return r, nil
}

// floor computes the first-principles figure beside the bound run's
// measured drain (drainBest): its own measured cordons, then the budgets'
// replacement cycles, each no sooner than the control plane's measured
// rate delivers the replacements it waits for. It is reported, not used
// as the bound: it counts neither the budgets' status writes nor the
// replacements' work on the same two cores, and no strategy comes near it.
func (r *result) floor(loads []budgetLoad) {
	cycles := drainCycles(len(r.cordoned), loads)
	last := 0
	for _, j := range cycles {
		last = max(last, j)
	}
	r.firstPrinciples = fleet.Percentile(floorTimes(r.cordoned, cycles, cycleStarts(last, loads, r.cycle, r.rate)), 99)
}

// settings splits -env's comma-separated DRAINPIPE_* settings.
func settings(env string) []string {
	if env == "" {
		return nil
	}
	return strings.Split(env, ",")
}

func isFloor(peer string) bool { return peer == "floor" || peer == "floor-inproc" }

// cordons reports a run whose handler only cordons: the floor's (which
// may drain after, by another client) and floor-2q.
func cordons(peer string) bool { return isFloor(peer) || peer == "floor-2q" }

// floorBootstrap builds the floor's Lambda bootstrap into the sandbox's
// directory, with Drainpipe's identity's kubeconfig for it.
func floorBootstrap(ctx context.Context, sb *sandbox.Sandbox) (bootstrap, kubeconfig string, err error) {
	kubeconfig, err = fleet.DrainpipeUser.WriteKubeconfig(sb.KubeconfigPath(), sb.Dir())
	if err != nil {
		return "", "", err
	}
	bootstrap = filepath.Join(sb.Dir(), "floor-bootstrap")
	b := lambdart.Build{Dir: ".", Package: "./test/bench/wave/floor/bootstrap", Output: bootstrap, Strip: true}
	if err := b.Run(ctx); err != nil {
		return "", "", fmt.Errorf("building the floor's bootstrap: %w", err)
	}
	return bootstrap, kubeconfig, nil
}
