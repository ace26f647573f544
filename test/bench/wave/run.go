package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/fleet"
	"github.com/drainpipe/drainpipe/test/sandbox"
)

// result is one run's measurements.
type result struct {
	targets               int
	cordonP99, drainedP99 time.Duration
	drainedP50            time.Duration
	undrained             int
	bound                 time.Duration
	hooks                 fleet.Hooks
	dlq, apf              int
	invocations, peak     int
	setup                 time.Duration
}

func (r *result) summary(peer string) string {
	return fmt.Sprintf("%-9s: %d nodes: cordon p99 %.2fs, drained p50 %.2fs p99 %s (%d undrained), hooks %+v, dlq %d, apf rejected %d, invocations %d, peak environments %d (setup %.0fs, load %s)",
		peer, r.targets, r.cordonP99.Seconds(), r.drainedP50.Seconds(), r.drainedString(), r.undrained, r.hooks, r.dlq, r.apf, r.invocations, r.peak, r.setup.Seconds(), loadavg())
}

// drainedString marks a p99 cut by the run's bound as a lower bound.
func (r *result) drainedString() string {
	if r.undrained > 0 && r.drainedP99 >= r.bound {
		return fmt.Sprintf(">%.0f", r.bound.Seconds())
	}
	return fmt.Sprintf("%.2f", r.drainedP99.Seconds())
}

// runOne measures one peer on a fresh sandbox and fleet.
func runOne(ctx context.Context, log *slog.Logger, o options, peer string) (*result, error) {
	began := time.Now()
	sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	sb, err := sandbox.Start(sctx, sandbox.Options{Logger: log})
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
	bctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	f, err := fleet.Build(bctx, admin, fake, fleet.Spec{
		Nodes: o.nodes, PodsPerNode: o.pods, SpotShare: o.spot, HookShare: o.hooks, Replicas: o.replicas, Seed: 16,
	})
	cancel()
	if err != nil {
		return nil, err
	}
	obs, err := f.Observe(ctx, admin)
	if err != nil {
		return nil, err
	}
	defer obs.Stop()
	apf0, err := fleet.APFRejected(ctx, admin)
	if err != nil {
		return nil, err
	}
	r := &result{targets: len(f.Targets()), bound: o.bound, setup: time.Since(began)}
	rctx, cancel := context.WithTimeout(ctx, o.bound)
	defer cancel()
	var queue, dlq string
	var stop func() error
	switch peer {
	case "drainpipe":
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
			MaxConcurrency: o.concurrency, Timeout: o.timeout, Stdout: output(o.verbose),
		})
		if err != nil {
			return nil, err
		}
		queue, dlq, stop = dp.Queue, dp.DLQ, dp.Stop
		defer func() {
			r.invocations, r.peak = len(dp.Mapping.Invocations()), dp.Mapping.PeakEnvironments()
		}()
	case "nth":
		if queue, dlq, err = fleet.Queues(fake, o.timeout, 5); err != nil {
			return nil, err
		}
		done := make(chan error, 1)
		go func() { done <- nth(rctx, sb.RESTConfig(), fake, queue) }()
		stop = func() error { cancel(); return <-done }
	case "limit":
		stop = func() error { return nil }
	default:
		return nil, fmt.Errorf("unknown peer %q (drainpipe, nth, limit)", peer)
	}

	var once sync.Once
	var stopErr error
	halt := func() error { once.Do(func() { stopErr = stop() }); return stopErr }
	defer halt() // on early returns too: no bootstrap outlives the run

	obs.Start()
	if queue != "" {
		if _, err := f.Enqueue(fake, queue); err != nil {
			return nil, err
		}
	} else {
		go limit(rctx, admin, f)
	}
	waitErr := obs.WaitDrained(rctx)
	if queue != "" && waitErr == nil { // the hooks are completed after the drains
		waitSettled(rctx, fake, queue)
	}
	if err := halt(); err != nil {
		return nil, err
	}
	return r.fill(ctx, admin, fake, f, obs, dlq, apf0)
}
