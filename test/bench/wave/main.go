// Command wave benchmarks a spot wave on a sandbox control plane: a share
// of a fleet's nodes get a Spot interruption warning at once, others a
// terminate lifecycle action, all through one SQS queue. Three runs, each
// on a fresh sandbox with an identical fleet (package test/fleet):
//
//   - drainpipe: the real bootstrap under an event source mapping like
//     Lambda's (batch size, batch window, MaximumConcurrency), acting as
//     its own RBAC user;
//   - nth: an NTH-style peer, one process with NTH's default 10 workers
//     draining with kubectl's drain library at client-go's defaults;
//   - limit: an unthrottled client cordoning every node and firing every
//     eviction at once.
//
// The last line printed is
//
//	bench wave<N>: cordon_p99=<s> drained_p99=<s> nth_drained_p99=<s> limit_drained=<s> ratio_nth=<x> ratio_limit=<y> dlq=<n> hooks_open=<n>
//
// where N is the number of nodes interrupted, ratio_nth = nth/drainpipe
// and ratio_limit = drainpipe/limit on the drained p99. A run that leaves
// nodes undrained at -bound reports the bound (a lower bound, marked).
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
	peers                  string
	verbose                bool
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
	flag.StringVar(&o.peers, "peers", "drainpipe,nth,limit", "which runs, in order")
	flag.BoolVar(&o.verbose, "v", false, "print the bootstraps' logs")
	flag.Parse()

	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	fmt.Printf("wave: %d nodes × %d pods, spot %.0f%%, hooks %.0f%% of the rest; batch %d, window %s, concurrency %d; load %s\n",
		o.nodes, o.pods, o.spot*100, o.hooks*100, o.batch, o.window, o.concurrency, loadavg())
	res := map[string]*result{}
	for _, peer := range strings.Split(o.peers, ",") {
		r, err := runOne(ctx, log, o, peer)
		if err != nil {
			return fmt.Errorf("%s: %w", peer, err)
		}
		res[peer] = r
		fmt.Println(r.summary(peer))
	}
	dp, nt, lim := res["drainpipe"], res["nth"], res["limit"]
	if dp == nil || nt == nil || lim == nil {
		return nil // the last line compares all three
	}
	fmt.Printf("bench wave%d: cordon_p99=%.2f drained_p99=%.2f nth_drained_p99=%s limit_drained=%.2f ratio_nth=%.1f ratio_limit=%.2f dlq=%d hooks_open=%d\n",
		dp.targets, dp.cordonP99.Seconds(), dp.drainedP99.Seconds(), nt.drainedString(), lim.drainedP99.Seconds(),
		nt.drainedP99.Seconds()/dp.drainedP99.Seconds(), dp.drainedP99.Seconds()/lim.drainedP99.Seconds(), dp.dlq, dp.hooks.Open)
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
