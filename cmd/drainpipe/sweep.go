package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/drainpipe/drainpipe/internal/config"
	"github.com/drainpipe/drainpipe/internal/handler"
)

// sweepUsage describes `drainpipe sweep`.
const sweepUsage = `usage: drainpipe sweep [--kubeconfig PATH] [--context NAME] [--dry-run] [--yes] [--timeout D]

Runs one sweep as the function's schedule does: checks every node Drainpipe
holds (label drainpipe.dev/held=true) against EC2 and repairs what a lost
notice left. Each repair is logged on stderr with its reason (JSON lines,
EMF metrics among them unless DRAINPIPE_METRICS=false); the outcome is
printed on stdout. Without --dry-run it asks first: at a terminal it waits
for y, otherwise it needs --yes.

Exits 0 when the sweep ran, 1 when it failed (to be run again), 2 on bad
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
	rest, code := parseArgs(fs, args)
	if code >= 0 {
		return code
	}
	var bad problems
	bad.none(rest)
	bad.timeout(*timeout)
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
	actor, err := s.actor(*dryRun)
	if err != nil {
		return s.fail(exitUsage, err)
	}
	began := time.Now()
	r := actor.Act(ctx, handler.Task{Sweep: true})
	out, _ := json.MarshalIndent(map[string]any{"status": r.Status.String(), "reason": r.Reason,
		"elapsedMs": time.Since(began).Milliseconds()}, "", "  ")
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
