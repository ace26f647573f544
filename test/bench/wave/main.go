// Command wave benchmarks a spot wave on a sandbox control plane: a share
// of a fleet's nodes get a Spot interruption warning at once, others a
// terminate lifecycle action, all through one SQS queue. Each run is on a
// fresh sandbox with an identical fleet (package test/fleet), its wave sent
// once the control plane is quiet (settle), a neighbour tenant reading and
// writing steadily throughout, each Spot instance taken back at its
// deadline with whatever pods are still on it (-reclaim):
//
//   - drainpipe: the real bootstrap under an event source mapping like
//     Lambda's (batch size, batch window, MaximumConcurrency), acting as
//     its own RBAC user, with deploy/flowcontrol.yaml applied;
//   - drainpipe-nofc: the same without the flow-control manifest;
//   - nth: an NTH-style peer, one process with NTH's default 10 workers
//     draining with kubectl's drain library at client-go's defaults;
//   - floor: the cordon reference, the unavoidable path of a serverless
//     handler (the event source model's delivery to a minimal Lambda
//     bootstrap, cold start included, one DescribeInstances per batch, one
//     PATCH per node: package floor), then a drain strategy with what no
//     handler has (drainBest: every budget and pod known in advance, the
//     exempt admin). Its run also yields the first-principles lower bound
//     of the drain (drainCycles: the budgets' replacement cycles, no sooner
//     than the control plane's measured replacement rate allows);
//   - paced: a drain strategy a handler could run: Drainpipe's user under
//     deploy/flowcontrol.yaml, every node cordoned at once, evictions Spot
//     nodes first at the replacement rate measured before the wave
//     (drainPaced);
//   - floor-inproc (on request): the floor's cordons run in process;
//   - floor-2q (on request): the floor's bootstrap deployed as Drainpipe
//     is, with the cordon queue: every notice reaches both queues and
//     both copies are cordoned (MaximumConcurrency as Drainpipe's two).
//     It only cordons: the reference for what cordoning a wave wider than
//     the work queue within its first second costs any handler;
//   - limit (on request): an unthrottled admin client cordoning every node
//     and firing every eviction at once.
//
// The peers run in the order given, reversed every other round (-rounds).
// Per run a summary (with -requests, before it, the line "bench requests
// <peer>:": the wave's API requests by identity, the handler's and the
// control plane's by call); then per peer a line pooling every round's nodes
// (pooledLine: per deadline class, Spot and hook, the graceful or drained
// percentiles, pods lost at the deadline and pods deleted past a budget);
// then every round's references and ratios with their median, minimum and
// maximum (roundsLine); and last the verdict (lastLine):
//
//	bench wave<N>: rounds=<n> cordon_p99=<s> drained_p99=<s> … ratio_cordon=<x> ratio_best_strategy=<x> ratio_lower_bound=<x> … spot_lost_pods=<n> paced_spot_lost_pods=<n> … spot_graceful_p99=<s> … hook_drained_p99=<s> … neighbour_p99=<s> … cost_gbs_per_node=<GB-s> …
//
// where N is the number of nodes interrupted per round. Ratios are
// Drainpipe's to a reference run in the same round, never clamped, their
// median over the rounds: ratio_cordon to the floor's cordon p99,
// ratio_best_strategy to the fastest drain strategy run (floor, paced,
// limit, nth; those that lost no pod first), ratio_lower_bound to the
// first-principles figure, ratio_cordon_2q to floor-2q's cordon p99.
// Times are percentiles over every node of every round; "inf" when the
// percentile falls on a node never reached, "-" when the run did not take
// place. -chart names the SVG of the last round's
// share of nodes cordoned and drained over time.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

type options struct {
	nodes, pods, replicas  int
	spot, hooks            float64
	concurrency, batch     int
	cordonConcurrency      int
	window, timeout, bound time.Duration
	bootstrap, rbac        string
	flowControl, chart     string
	memoryMB               int
	peers                  string
	env                    string // comma-separated DRAINPIPE_* settings for Drainpipe's runs
	verbose                bool
	reclaim                bool // Spot instances go at their deadline (fleet.Reclaim)
	rounds                 int  // the peers run this many times (roundsLine)
	floorDrain             bool // the floor drains after its cordons, as an exempt admin (drainBest)
	requests               bool // log and count every request of the wave (requests.go)
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench-wave:", err)
		os.Exit(1)
	}
}

func run() error {
	var o options
	flag.IntVar(&o.nodes, "nodes", 200, "kwok nodes in the fleet")
	flag.IntVar(&o.pods, "pods", 20, "pods per node, one of them a DaemonSet's")
	flag.IntVar(&o.replicas, "replicas", 20, "pods per Deployment")
	flag.Float64Var(&o.spot, "spot", 0.2, "share of the nodes getting a Spot interruption warning")
	flag.Float64Var(&o.hooks, "hooks", 0.1, "share of the other nodes getting a terminate lifecycle action")
	flag.IntVar(&o.concurrency, "concurrency", 10, "the event source's MaximumConcurrency")
	flag.IntVar(&o.cordonConcurrency, "cordon-concurrency", 20, "the cordon queue's event source's MaximumConcurrency (negative: no cordon queue); the floor gets one queue with both concurrencies")
	flag.IntVar(&o.batch, "batch", 10, "the event source's batch size")
	flag.DurationVar(&o.window, "window", 0, "the event source's batch window")
	flag.DurationVar(&o.timeout, "timeout", 300*time.Second, "the function timeout")
	flag.DurationVar(&o.bound, "bound", 10*time.Minute, "how long a run may take to drain every node")
	flag.StringVar(&o.bootstrap, "bootstrap", "dist/local/bootstrap", "the bootstrap to run (make build-local)")
	flag.StringVar(&o.rbac, "rbac", "deploy/rbac.yaml", "Drainpipe's RBAC manifest")
	flag.StringVar(&o.flowControl, "flowcontrol", "deploy/flowcontrol.yaml", "Drainpipe's flow-control manifest")
	flag.IntVar(&o.memoryMB, "memory", 0, "the function's memory in MB, for the bill; 0: the stack's default (infra/stack/props.go)")
	flag.StringVar(&o.chart, "chart", "dist/bench-wave.svg", "where to write the chart; empty: none")
	flag.StringVar(&o.peers, "peers", "drainpipe,drainpipe-nofc,nth,floor,paced", "which runs, in order, reversed every other round (also: floor-inproc, floor-2q, limit)")
	flag.StringVar(&o.env, "env", "", "more DRAINPIPE_* settings for Drainpipe's runs, comma-separated (e.g. DRAINPIPE_KUBE_EVENTS=false)")
	flag.BoolVar(&o.verbose, "v", false, "print the bootstraps' logs")
	flag.IntVar(&o.rounds, "rounds", 1, "run the peers this many times, alternating their order; the verdict pools every round's nodes and takes the median of its ratios")
	flag.BoolVar(&o.floorDrain, "floor-drain", true, "after its cordons the floor drains as an exempt admin (APF's exempt level, no client-side limit), "+
		"which loads the machine the other runs share; false: it cordons only, and neither its drain nor the best strategy counts it")
	flag.BoolVar(&o.reclaim, "reclaim", true, "take each Spot instance back at its deadline, its pods with it, as EC2 does")
	flag.BoolVar(&o.requests, "requests", false, "audit every request of the wave (not leases, node or pod status) and print who made them (bench requests <peer>:); "+
		"the audit slows the API server, so the run's times compare with no run without it")
	flag.Parse()
	if o.memoryMB == 0 {
		var err error
		if o.memoryMB, err = stackMemoryMB("."); err != nil {
			return err
		}
	}

	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	fmt.Printf("wave: %d nodes × %d pods, spot %.0f%%, hooks %.0f%% of the rest; batch %d, window %s, concurrency %d, cordon queue %d; load %s\n",
		o.nodes, o.pods, o.spot*100, o.hooks*100, o.batch, o.window, o.concurrency, o.cordonConcurrency, loadavg())
	var rounds []map[string]*result
	var orders [][]string
	var res map[string]*result
	for round := range max(1, o.rounds) {
		order := roundOrder(strings.Split(o.peers, ","), round)
		if o.rounds > 1 {
			fmt.Printf("round %d of %d: %s\n", round+1, o.rounds, strings.Join(order, ", "))
		}
		res = map[string]*result{}
		for _, peer := range order {
			r, err := runOne(ctx, log, o, peer)
			if err != nil {
				return fmt.Errorf("%s: %w", peer, err)
			}
			res[peer] = r
			fmt.Println(r.summary(peer))
		}
		rounds, orders = append(rounds, res), append(orders, order)
	}
	if err := chart(o, res); err != nil {
		return err
	}
	for _, peer := range strings.Split(o.peers, ",") {
		if p, ok := pool(rounds, peer); ok {
			fmt.Println(pooledLine(peer, p))
		}
	}
	if line, ok := roundsLine(rounds, orders); ok {
		fmt.Println(line)
	}
	if line, ok := lastLine(rounds); ok {
		fmt.Println(line)
	}
	return nil
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

func output(verbose bool) io.Writer {
	if verbose {
		return os.Stderr
	}
	return nil
}
