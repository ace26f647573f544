package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/drainpipe/drainpipe/internal/config"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/sweep"
)

// sweepUsage describes `drainpipe sweep`.
const sweepUsage = `usage: drainpipe sweep [--kubeconfig PATH] [--context NAME] [--dry-run] [--yes] [--timeout D] [-o json]

Runs one sweep as the function's schedule does: checks every node Drainpipe
holds (label drainpipe.dev/held=true) against EC2 and repairs what a lost
notice left. Each repair is logged on stderr with its reason (JSON lines,
EMF metrics among them unless DRAINPIPE_METRICS=false); the sweep's report
(its summary, every repair and every held node left, with why) is printed
on stdout, -o json as one JSON object. Without --dry-run it asks first: at
a terminal it waits for y, otherwise it needs --yes.

Exits 0 when the sweep ran, 1 when it failed or something could not be
checked or a drain is unfinished (to be run again), 2 on bad
arguments or configuration (no AWS credentials or region included), or
when not confirmed.

Flags:`

// sweepCmd runs one sweep from a laptop.
func sweepCmd(ctx context.Context, c cli, args []string) int {
	fs := newFlags(c, "sweep", sweepUsage)
	local := addLocalFlags(fs)
	dryRun := addDryRun(fs, "log what would be repaired, write nothing")
	timeout := addTimeout(fs, defaultRunTimeout, "the sweep's deadline")
	yes := addYes(fs, "write the repairs without asking")
	output := addOutput(fs, "output format: json (default a table)")
	rest, code := parseArgs(fs, args)
	if code >= 0 {
		return code
	}
	var bad problems
	bad.none(rest)
	bad.timeout(*timeout)
	bad.output(*output, "json")
	if code := bad.report(c, "sweep"); code >= 0 {
		return code
	}
	s, code := start(c, "sweep", startSpec{config: true, local: local})
	defer s.end()
	if code >= 0 {
		return code
	}
	cfg := s.cfg
	if !*dryRun && !cfg.DryRun && !confirmed(c, "sweep", sweepPlan(cfg), "; --dry-run logs the repairs without writing", *yes) {
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	if code := s.connect(ctx); code >= 0 {
		return code
	}
	acts, err := s.actors(*dryRun)
	if err != nil {
		return s.fail(exitUsage, err)
	}
	rep := acts.Sweep.Run(ctx)
	if err := printSweep(c.Stdout, rep, *output); err != nil {
		return s.failf(exitFail, "writing: %w", err)
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
	return "repair, in " + clusterWhere(cfg) + ", every node Drainpipe holds that a lost notice left: give back a node whose " +
		"threat is over, taint out of service one whose instance stopped, and act on scheduled events no notice announced."
}

// clusterWhere names the cluster(s) a command writes to, for its
// confirmation.
func clusterWhere(cfg config.Config) string {
	if cfg.Kubeconfig != "" {
		return "the cluster of kubeconfig " + cfg.Kubeconfig
	}
	return "cluster(s) " + strings.Join(cfg.Clusters, ", ")
}
