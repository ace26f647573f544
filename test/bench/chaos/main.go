// Command chaos runs Drainpipe's fault matrix (package test/chaos): each
// scenario on a control plane of its own, a wave of Spot warnings and
// terminate hooks through the modelled queue and real bootstraps, one
// fault injected mid-drain. It prints a table, each broken invariant, and
// last
//
//	chaos: scenarios=<n> messages=<m> lost=<n> early_completions=<n> double_completions=<n> hooks_open=<n>
//
// It exits 1 when an invariant broke.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/drainpipe/drainpipe/test/chaos"
	"github.com/drainpipe/drainpipe/test/sandbox"
)

func main() {
	ok, err := run()
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		os.Exit(2)
	}
	if !ok {
		os.Exit(1)
	}
}

func run() (bool, error) {
	bootstrap := flag.String("bootstrap", "dist/local/bootstrap", "the bootstrap to run (make build-local)")
	rbac := flag.String("rbac", "deploy/rbac.yaml", "Drainpipe's RBAC manifest")
	only := flag.String("run", "", "comma-separated scenario names (default: all)")
	nodes := flag.Int("nodes", 0, "fleet size (default: the CI size, 8)")
	verbose := flag.Bool("v", false, "print the bootstraps' logs")
	flag.Parse()

	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	dir, err := os.MkdirTemp("", "drainpipe-chaos-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(dir)
	env := chaos.Env{Bootstrap: *bootstrap, RBAC: *rbac, Dir: dir}
	if *verbose {
		env.Stdout = os.Stderr
	}
	var results []chaos.Result
	for _, sc := range chaos.Scenarios() {
		if *only != "" && !strings.Contains(","+*only+",", ","+sc.Name+",") {
			continue
		}
		if *nodes > 0 {
			if sc.Spec.Nodes == 0 {
				sc.Spec = chaos.DefaultSpec()
			}
			sc.Spec.Nodes = *nodes
		}
		res, err := runOne(ctx, sc, env)
		if err != nil {
			return false, fmt.Errorf("%s: %w", sc.Name, err)
		}
		fmt.Fprintf(os.Stderr, "%s: %d messages, %d problems, %.0fs\n", sc.Name, res.Messages, len(res.Problems), res.Elapsed.Seconds())
		results = append(results, res)
	}
	if err := chaos.PrintTable(os.Stdout, results); err != nil {
		return false, err
	}
	for _, r := range results {
		if !r.OK() {
			return false, nil
		}
	}
	return true, nil
}

// runOne runs a scenario on a sandbox of its own.
func runOne(ctx context.Context, sc chaos.Scenario, env chaos.Env) (chaos.Result, error) {
	opts := sc.Sandbox
	opts.Logger = slog.New(slog.DiscardHandler)
	sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	sb, err := sandbox.Start(sctx, opts)
	cancel()
	if err != nil {
		return chaos.Result{}, fmt.Errorf("starting sandbox: %w", err)
	}
	defer func() {
		if err := sb.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "chaos: stopping sandbox:", err)
		}
	}()
	return chaos.Run(ctx, sb, sc, env)
}
