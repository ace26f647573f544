package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/drainpipe/drainpipe/internal/config"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/live"
	"github.com/drainpipe/drainpipe/internal/metrics"
)

// sweepUsage describes `drainpipe sweep`.
const sweepUsage = `usage: drainpipe sweep [--kubeconfig PATH] [--dry-run] [--yes] [--timeout D]

Runs one sweep as the function's schedule does: checks every node Drainpipe
holds (label drainpipe.dev/held=true) against EC2 and repairs what a lost
notice left. Each repair is logged on stderr with its reason; the outcome
is printed on stdout. Without --dry-run it asks first: at a terminal it
waits for y, otherwise it needs --yes (exit 2 when not confirmed).`

// sweepCmd runs one sweep from a laptop.
func sweepCmd(ctx context.Context, c cli, args []string) int {
	fs := newFlags(c, "sweep", sweepUsage)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the cluster to sweep (local mode)")
	dryRun := fs.Bool("dry-run", false, "log what would be repaired, write nothing")
	timeout := fs.Duration("timeout", defaultRunTimeout, "the sweep's deadline")
	yes := fs.Bool("yes", false, "write the repairs without asking")
	rest, code := parseArgs(fs, args)
	if code >= 0 {
		return code
	}
	if len(rest) > 0 || *timeout <= 0 {
		return exitUsage
	}
	getenv := withKubeconfig(c.Getenv, *kubeconfig)
	cfg, err := config.Load(getenv)
	if err != nil {
		fmt.Fprintf(c.Stderr, "drainpipe sweep: %v\n", err)
		return exitUsage
	}
	if !*dryRun && !cfg.DryRun && !confirmed(c, "sweep", sweepPlan(cfg), "; --dry-run logs the repairs without writing", *yes) {
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	awsCfg, err := live.AWSConfig(ctx)
	if err != nil {
		fmt.Fprintf(c.Stderr, "drainpipe sweep: %v\n", err)
		return exitUsage
	}
	log := slog.New(slog.NewJSONHandler(c.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	actor, err := live.NewActor(cfg, awsCfg, log, live.Options{DryRun: *dryRun, Metrics: metrics.New(c.Stderr).WithStack(cfg.MetricsStack)})
	if err != nil {
		fmt.Fprintf(c.Stderr, "drainpipe sweep: %v\n", err)
		return exitUsage
	}
	start := time.Now()
	r := actor.Act(ctx, handler.Task{Sweep: true})
	out, _ := json.MarshalIndent(map[string]any{"status": r.Status.String(), "reason": r.Reason,
		"elapsedMs": time.Since(start).Milliseconds()}, "", "  ")
	fmt.Fprintln(c.Stdout, string(out))
	if r.Status == handler.StatusRetry {
		return exitFail
	}
	return exitOK
}

// sweepPlan says what a sweep writes, for its confirmation: which repairs
// it makes is known only once EC2 is asked, which --dry-run does.
func sweepPlan(cfg config.Config) string {
	where := "cluster(s) " + strings.Join(cfg.Clusters, ", ")
	if cfg.Kubeconfig != "" {
		where = "the cluster of kubeconfig " + cfg.Kubeconfig
	}
	return "repair, in " + where + ", every node Drainpipe holds that a lost notice left: give back a node whose " +
		"threat is over, taint out of service one whose instance stopped, and act on scheduled events no notice announced."
}
