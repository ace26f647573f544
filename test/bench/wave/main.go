// Command wave benchmarks a spot wave on a sandbox control plane: a share
// of a fleet's nodes get a Spot interruption warning at once, others a
// terminate lifecycle action, all through one SQS queue. Each run is on a
// fresh sandbox with an identical fleet (package test/fleet), its wave sent
// once the control plane is quiet (settle), a neighbour tenant reading and
// writing steadily throughout:
//
//   - drainpipe: the real bootstrap under an event source mapping like
//     Lambda's (batch size, batch window, MaximumConcurrency), acting as
//     its own RBAC user, with deploy/flowcontrol.yaml applied;
//   - drainpipe-nofc: the same without the flow-control manifest;
//   - nth: an NTH-style peer, one process with NTH's default 10 workers
//     draining with kubectl's drain library at client-go's defaults;
//   - floor: the bound. Its cordons are the unavoidable path of a
//     serverless handler, measured: the event source model's delivery to
//     a minimal Lambda bootstrap (cold start included), one
//     DescribeInstances per batch, one PATCH per node (package floor).
//     Its drain is the best strategy that respects the budgets we can
//     build (drainBest): every budget and pod known in advance, the exempt
//     admin client, each budget's pods evicted one at a time as soon as
//     it grants. The first-principles figure (drainCycles: per budget, the
//     evictions it must grant one cycle after another, times the
//     replacement cycle measured before the wave, each cycle no sooner
//     than its replacements at the control plane's measured rate) is
//     printed beside it, not used: it ignores the budgets' own work on the
//     same cores, and no strategy comes near it;
//   - floor-inproc (on request): the same with the cordon function run in
//     process, without a process start or the runtime API;
//   - limit (on request): an unthrottled admin client cordoning every node
//     and firing every eviction at once, another strategy.
//
// The last line printed is
//
//	bench wave<N>: cordon_p99=<s> drained_p99=<s> nth_drained_p99=<s> floor_cordon_p99=<s> floor_drained_p99=<s> fp_drained_p99=<s> ratio_nth=<x> ratio_limit=<y> ratio_cordon=<z> apf_rejected=<n> apf_rejected_nofc=<n> neighbour_p99=<s> neighbour_p99_nofc=<s> neighbour_rejected=<n> neighbour_rejected_nofc=<n> cost_gbs_per_node=<GB-s> kube_per_node=<n> aws_per_node=<n> dlq=<n> hooks_open=<n>
//
// where N is the number of nodes interrupted, ratio_nth = nth/drainpipe on
// the drained p99, ratio_limit = drainpipe/floor on the drained p99 and
// ratio_cordon = drainpipe/floor on the cordon p99. The floor reported is
// the best of every run measured (the bound run, Drainpipe's own and any
// other that drained every node), so both ratios are at least 1 by
// construction; fp_drained_p99 is the first-principles figure. A run that leaves nodes undrained at -bound reports the
// bound (a lower bound, marked). -chart names the SVG of the share of
// nodes cordoned and drained over time. -rounds N runs the peers N times
// and prints, before the last line (the last round's),
//
//	bench rounds=<N>: cordon_p99s=<s,…> floor_cordon_p99s=<s,…> ratio_cordons=<z,…> ratio_limits=<y,…> median_ratio_cordon=<z> median_ratio_limit=<y>
//
// each round's ratio against its own bound, and their medians.
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
	window, timeout, bound time.Duration
	bootstrap, rbac        string
	flowControl, chart     string
	memoryMB               int
	peers                  string
	env                    string // comma-separated DRAINPIPE_* settings for Drainpipe's runs
	verbose                bool
	reclaim                bool // Spot instances go at their deadline (fleet.Reclaim)
	rounds                 int  // the peers run this many times (roundsLine)
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
	flag.IntVar(&o.batch, "batch", 10, "the event source's batch size")
	flag.DurationVar(&o.window, "window", 0, "the event source's batch window")
	flag.DurationVar(&o.timeout, "timeout", 300*time.Second, "the function timeout")
	flag.DurationVar(&o.bound, "bound", 10*time.Minute, "how long a run may take to drain every node")
	flag.StringVar(&o.bootstrap, "bootstrap", "dist/local/bootstrap", "the bootstrap to run (make build-local)")
	flag.StringVar(&o.rbac, "rbac", "deploy/rbac.yaml", "Drainpipe's RBAC manifest")
	flag.StringVar(&o.flowControl, "flowcontrol", "deploy/flowcontrol.yaml", "Drainpipe's flow-control manifest")
	flag.IntVar(&o.memoryMB, "memory", 0, "the function's memory in MB, for the bill; 0: the stack's default (infra/stack/props.go)")
	flag.StringVar(&o.chart, "chart", "dist/bench-wave.svg", "where to write the chart; empty: none")
	flag.StringVar(&o.peers, "peers", "drainpipe,drainpipe-nofc,nth,floor", "which runs, in order (also: limit)")
	flag.StringVar(&o.env, "env", "", "more DRAINPIPE_* settings for Drainpipe's runs, comma-separated (e.g. DRAINPIPE_KUBE_EVENTS=false)")
	flag.BoolVar(&o.verbose, "v", false, "print the bootstraps' logs")
	flag.IntVar(&o.rounds, "rounds", 1, "run the peers this many times, each round back to back; more than one adds a line of every round's ratios and their median")
	flag.BoolVar(&o.reclaim, "reclaim", true, "take each Spot instance back at its deadline, its pods with it, as EC2 does")
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
	fmt.Printf("wave: %d nodes × %d pods, spot %.0f%%, hooks %.0f%% of the rest; batch %d, window %s, concurrency %d; load %s\n",
		o.nodes, o.pods, o.spot*100, o.hooks*100, o.batch, o.window, o.concurrency, loadavg())
	var rounds []map[string]*result
	var res map[string]*result
	for round := range max(1, o.rounds) {
		if o.rounds > 1 {
			fmt.Printf("round %d of %d\n", round+1, o.rounds)
		}
		res = map[string]*result{}
		for _, peer := range strings.Split(o.peers, ",") {
			r, err := runOne(ctx, log, o, peer)
			if err != nil {
				return fmt.Errorf("%s: %w", peer, err)
			}
			res[peer] = r
			fmt.Println(r.summary(peer))
		}
		rounds = append(rounds, res)
	}
	if err := chart(o, res); err != nil {
		return err
	}
	if line, ok := roundsLine(rounds); ok {
		fmt.Println(line)
	}
	if line, ok := lastLine(res); ok {
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
