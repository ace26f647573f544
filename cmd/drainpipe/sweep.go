package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"

	"github.com/drainpipe/drainpipe/internal/config"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/live"
	"github.com/drainpipe/drainpipe/internal/metrics"
	"github.com/drainpipe/drainpipe/internal/sweep"
)

// sweepUsage describes `drainpipe sweep`.
const sweepUsage = `usage: drainpipe sweep [--kubeconfig PATH] [--dry-run] [--yes] [--timeout D] [-o json]

Runs one sweep as the function's schedule does: checks every node Drainpipe
holds (label drainpipe.dev/held=true) against EC2 and repairs what a lost
notice left. Each repair is logged on stderr with its reason; the sweep's
report (every repair, every held node left and why) is printed on stdout,
-o json as one JSON object. Without --dry-run it asks first: at a terminal
it waits for y, otherwise it needs --yes (exit 2 when not confirmed).
Exit 1 when something could not be checked or a drain is unfinished (the
function would retry the sweep).`

// sweepCmd runs one sweep from a laptop.
func sweepCmd(ctx context.Context, c cli, args []string) int {
	fs := newFlags(c, "sweep", sweepUsage)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the cluster to sweep (local mode)")
	dryRun := fs.Bool("dry-run", false, "log what would be repaired, write nothing")
	timeout := fs.Duration("timeout", defaultRunTimeout, "the sweep's deadline")
	yes := fs.Bool("yes", false, "write the repairs without asking")
	output := fs.String("o", "", "output format: json (default a table)")
	rest, code := parseArgs(fs, args)
	if code >= 0 {
		return code
	}
	if len(rest) > 0 || *timeout <= 0 {
		return exitUsage
	}
	if *output != "" && *output != "json" {
		fmt.Fprintf(c.Stderr, "drainpipe sweep: -o %q: want json\n", *output)
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
	acts, err := live.NewActors(cfg, awsCfg, log, live.Options{DryRun: *dryRun, Metrics: metrics.New(c.Stderr).WithStack(cfg.MetricsStack)})
	if err != nil {
		fmt.Fprintf(c.Stderr, "drainpipe sweep: %v\n", err)
		return exitUsage
	}
	rep := acts.Sweep.Run(ctx)
	if err := printSweep(c.Stdout, rep, *output); err != nil {
		fmt.Fprintf(c.Stderr, "drainpipe sweep: writing: %v\n", err)
		return exitFail
	}
	if rep.Result().Status == handler.StatusRetry {
		return exitFail
	}
	return exitOK
}

// printSweep prints a sweep's report: its summary, then one line per
// repair and per held node left; -o json prints the report itself.
func printSweep(out io.Writer, rep sweep.Report, format string) error {
	if format == "json" {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	fmt.Fprintln(out, rep.Result().Reason)
	if len(rep.Repairs)+len(rep.Left) == 0 {
		return nil
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "\nNODE\tCLUSTER\tINSTANCE\tOUTCOME\tREASON")
	for _, r := range rep.Repairs {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", r.Node, r.Cluster, dash(r.Instance), r.What, r.Reason)
	}
	for _, l := range rep.Left {
		fmt.Fprintf(w, "%s\t%s\t-\tleft\t%s\n", l.Node, l.Cluster, l.Reason)
	}
	return w.Flush()
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
