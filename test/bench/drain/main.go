// Command drain benchmarks node drains on one sandbox control plane:
// Drainpipe, kubectl drain, and the physical limit (an unthrottled client
// that cordons, fires every eviction at once and waits for the pods to go).
//
// Drainpipe runs with the function's own defaults (DRAINPIPE_EVICTION_CONCURRENCY,
// and the pace of DRAINPIPE_CLUSTER_EVICTION_RATE over DRAINPIPE_MAX_CONCURRENCY,
// a fresh instance's for each measurement), and once more per repetition with
// pacing off, so that the pace's cost is measured in the same run.
//
// Setup, identical for all and re-created before each measurement: a
// fresh EKS-like kwok node holding N bare pods (no controller, so nothing
// recreates them and no controller churn loads the API server while the
// clock runs; kubectl gets --force for them), grace period 0, no
// PodDisruptionBudget. The last lines printed are
//
//	bench pace<N>: paced=<s> unpaced=<s> ratio_pace=<z>
//	bench drain110: drainpipe=<s> kubectl=<s> limit=<s> ratio_kubectl=<x> ratio_limit=<y>
//
// with ratio_kubectl = kubectl/drainpipe, ratio_limit = drainpipe/limit and
// ratio_pace = paced/unpaced, each a median of the repetitions.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/config"
	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/kevents"
	"github.com/drainpipe/drainpipe/test/sandbox"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type options struct {
	pods, reps, fleetNodes, fleetPods int
	kubectl, warnPods                 string
}

func run() error {
	var o options
	flag.IntVar(&o.pods, "pods", 110, "pods on the drained node")
	flag.IntVar(&o.reps, "reps", 3, "measurements of drainpipe and of the limit (the median is reported); kubectl runs once")
	flag.IntVar(&o.fleetNodes, "fleet-nodes", 10, "nodes drained concurrently in the fleet scenario (0 skips it)")
	flag.IntVar(&o.fleetPods, "fleet-pods", 100, "pods per node in the fleet scenario")
	flag.StringVar(&o.kubectl, "kubectl", "/usr/bin/kubectl", "kubectl CLI; when missing, kubectl's drain library runs with the CLI's defaults")
	flag.StringVar(&o.warnPods, "warn-pods", "opted-in", "DRAINPIPE_WARN_PODS: all warns every pod before the first eviction (annotation and event), "+
		"with Kubernetes events on as the function writes them")
	flag.Parse()

	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	// Drainpipe logs as in production (JSON, info) but out of sight.
	drainLog := slog.New(slog.NewJSONHandler(io.Discard, nil))
	startCtx, startCancel := context.WithTimeout(ctx, 2*time.Minute)
	defer startCancel()
	sb, err := sandbox.Start(startCtx, sandbox.Options{Logger: log})
	if err != nil {
		return fmt.Errorf("starting sandbox: %w", err)
	}
	defer func() {
		if err := sb.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "bench: stopping sandbox:", err)
		}
	}()
	b, err := newBench(sb, drainLog, o.warnPods)
	if err != nil {
		return err
	}
	return b.all(ctx, o)
}

// bench holds the clients: admin is unthrottled (setup and the limit),
// tuned is configured as Drainpipe's Lambda configures its client.
type bench struct {
	sb    *sandbox.Sandbox
	admin kubernetes.Interface
	tuned kubernetes.Interface
	// drains returns a drainer as a fresh function instance has it, paced
	// or not.
	drains func(paced bool) runner
	seq    int
}

type runner interface {
	Run(ctx context.Context, req drain.Request) (drain.Report, error)
}

func newBench(sb *sandbox.Sandbox, log *slog.Logger, warnPods string) (*bench, error) {
	rc := sb.RESTConfig()
	rc.QPS, rc.Burst = -1, 0
	admin, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("creating admin client: %w", err)
	}
	rc = sb.RESTConfig()
	drain.TuneRESTConfig(rc, 0, 0)
	tuned, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("creating drainpipe client: %w", err)
	}
	fn := config.Default()
	base := drain.DefaultConfig()
	base.Concurrency = fn.EvictionConcurrency
	b := &bench{sb: sb, admin: admin, tuned: tuned}
	switch warnPods {
	case "opted-in":
		b.drains = func(paced bool) runner {
			cfg := base
			if paced {
				cfg.Pace = drain.NewPace(float64(fn.ClusterEvictionRate), fn.MaxConcurrency)
			}
			return drain.New(tuned, cfg, log)
		}
	case "all":
		// The warnings as the function gives them with
		// DRAINPIPE_WARN_PODS=all: an annotation and an event per pod
		// before the first eviction, and the node's events. The other pod
		// events (evicted, blocked) are left out, as the opted-in run
		// leaves them: they are not the warnings' cost.
		b.drains = func(paced bool) runner {
			cfg := base
			if paced {
				cfg.Pace = drain.NewPace(float64(fn.ClusterEvictionRate), fn.MaxConcurrency)
			}
			rec := kevents.New(tuned, kevents.Options{Log: log, Pace: cfg.Pace})
			cfg.WarnAll, cfg.Announce = true, rec.Announce
			return rec.Wrap(drain.New(tuned, cfg, log))
		}
	default:
		return nil, fmt.Errorf("-warn-pods: want all or opted-in, got %q", warnPods)
	}
	return b, nil
}

func (b *bench) all(ctx context.Context, o options) error {
	var dp, unpaced, lim []time.Duration
	for i := range o.reps {
		// Alternate which goes first so none always meets a warmer server.
		order := []string{"drainpipe", "unpaced", "limit"}
		if i%2 == 1 {
			slices.Reverse(order)
		}
		for _, who := range order {
			d, err := b.measure(ctx, who, 1, o.pods)
			if err != nil {
				return err
			}
			switch who {
			case "drainpipe":
				dp = append(dp, d)
			case "unpaced":
				unpaced = append(unpaced, d)
			default:
				lim = append(lim, d)
			}
			fmt.Printf("drain%d %-9s run %d: %.3fs\n", o.pods, who, i+1, d.Seconds())
		}
	}
	kc, err := b.measure(ctx, "kubectl:"+o.kubectl, 1, o.pods)
	if err != nil {
		return err
	}
	fmt.Printf("drain%d %-9s run 1: %.3fs (%s)\n", o.pods, "kubectl", kc.Seconds(), kubectlKind(o.kubectl))

	if o.fleetNodes > 0 {
		fdp, err := b.measure(ctx, "drainpipe", o.fleetNodes, o.fleetPods)
		if err != nil {
			return err
		}
		flim, err := b.measure(ctx, "limit", o.fleetNodes, o.fleetPods)
		if err != nil {
			return err
		}
		fmt.Printf("bench fleet%dx%d: drainpipe=%.3f limit=%.3f ratio_limit=%.2f\n",
			o.fleetNodes, o.fleetPods, fdp.Seconds(), flim.Seconds(), fdp.Seconds()/flim.Seconds())
	}
	mdp, mun, mlim := median(dp), median(unpaced), median(lim)
	fmt.Printf("bench pace%d: paced=%.3f unpaced=%.3f ratio_pace=%.2f\n",
		o.pods, mdp.Seconds(), mun.Seconds(), mdp.Seconds()/mun.Seconds())
	fmt.Printf("bench drain%d: drainpipe=%.3f kubectl=%.3f limit=%.3f ratio_kubectl=%.1f ratio_limit=%.2f\n",
		o.pods, mdp.Seconds(), kc.Seconds(), mlim.Seconds(), kc.Seconds()/mdp.Seconds(), mdp.Seconds()/mlim.Seconds())
	return nil
}

// measure sets up nodes×pods afresh and times one drainer draining every
// node concurrently.
func (b *bench) measure(ctx context.Context, who string, nodes, pods int) (time.Duration, error) {
	sc, err := b.setup(ctx, nodes, pods)
	if err != nil {
		return 0, err
	}
	defer sc.teardown(b.admin)
	var drainOne func(context.Context, string) error
	switch {
	case who == "drainpipe", who == "unpaced":
		// One drainer for every node: one function instance.
		d := b.drains(who == "drainpipe")
		drainOne = func(ctx context.Context, node string) error { return drainpipe(ctx, d, node) }
	case who == "limit":
		drainOne = b.limit
	case len(who) > 8 && who[:8] == "kubectl:":
		drainOne = func(ctx context.Context, node string) error { return b.kubectl(ctx, who[8:], node) }
	default:
		return 0, fmt.Errorf("unknown drainer %q", who)
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	errs := make([]error, len(sc.nodes))
	start := time.Now()
	var wg sync.WaitGroup
	for i, n := range sc.nodes {
		wg.Go(func() { errs[i] = drainOne(rctx, n) })
	}
	wg.Wait()
	elapsed := time.Since(start)
	for _, err := range errs {
		if err != nil {
			return 0, fmt.Errorf("%s: %w", who, err)
		}
	}
	// Every drainer must have left the nodes empty.
	if err := sc.checkEmpty(ctx, b.admin); err != nil {
		return 0, fmt.Errorf("%s: %w", who, err)
	}
	return elapsed, nil
}

func drainpipe(ctx context.Context, d runner, node string) error {
	rep, err := d.Run(ctx, drain.Request{Node: node, Kind: "spot-interruption", EventID: "bench", Evict: true})
	if err != nil {
		return err
	}
	if !rep.Done {
		return fmt.Errorf("drain of %s not done: %+v", node, rep)
	}
	return nil
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
