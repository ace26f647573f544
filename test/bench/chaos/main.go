// Command chaos runs Drainpipe's fault matrix (package test/chaos): each
// scenario on a control plane of its own, a wave of Spot warnings and
// terminate hooks through the modelled queue and real bootstraps, one
// fault injected mid-drain. It prints a table, each broken invariant, and
// last
//
//	chaos: scenarios=<n> messages=<m> lost=<n> early_completions=<n> double_completions=<n> hooks_open=<n>
//
// The scenarios run at once, each on a control plane of its own. It exits 1
// when an invariant broke.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

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
	parallel := flag.Int("parallel", 0, "scenarios run at once (default 5)")
	verbose := flag.Bool("v", false, "print the bootstraps' last lines of a scenario whose invariants broke")
	flag.Parse()

	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	dir, err := os.MkdirTemp("", "drainpipe-chaos-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(dir)
	env := chaos.Env{Bootstrap: *bootstrap, RBAC: *rbac, Dir: dir, Parallel: *parallel}
	scenarios := chaos.Pick(chaos.Scenarios(), *only)
	for i := range scenarios {
		if *nodes > 0 {
			if scenarios[i].Spec.Nodes == 0 {
				scenarios[i].Spec = chaos.DefaultSpec()
			}
			scenarios[i].Spec.Nodes = *nodes
		}
	}
	var results []chaos.Result
	failed := false
	for _, o := range chaos.RunAll(ctx, sandbox.DefaultBinDir(os.Getenv), scenarios, env) {
		if o.Err != nil {
			fmt.Fprintf(os.Stderr, "chaos: %s: %v\n", o.Scenario, o.Err)
			failed = true
			continue
		}
		results = append(results, o.Result)
		if *verbose && !o.OK() {
			fmt.Fprintf(os.Stderr, "%s: the bootstraps' last lines:\n%s\n", o.Scenario, strings.Join(o.LogTail, "\n"))
		}
	}
	if err := chaos.PrintTable(os.Stdout, results); err != nil {
		return false, err
	}
	for _, r := range results {
		failed = failed || !r.OK()
	}
	return !failed, nil
}
