package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/drainpipe/drainpipe/internal/drain"
)

const uncordonUsage = `usage: drainpipe uncordon [--kubeconfig PATH] [--context NAME] [--dry-run] [--yes] [--force] NODE... | --all | -l SELECTOR

Gives nodes back exactly as Drainpipe does when a threat passes: removes its
taints and annotations, makes a node schedulable only if Drainpipe cordoned
it, and restores the load-balancer exclusion label's previous value. A node
Karpenter is disrupting, or without Drainpipe's marks, is left alone; so is
a node whose deadline has not passed (a Spot warning still running: the
instance may go at it) unless --force.
--all takes every node Drainpipe holds; -l those of a label selector (the
ones Drainpipe holds among them). Both say which nodes they would give back
and ask first: at a terminal they wait for y, otherwise they need --yes.
--dry-run sends the changes as an API server dry run: the same answers,
nothing written, nothing asked.

One line per node on standard output. Exits 0 when every node was given back
or left alone, 1 when one could not be read or changed, 2 on bad arguments
or when --all or -l is not confirmed.

Flags:`

// uncordon is `drainpipe uncordon`.
func uncordon(ctx context.Context, c cli, args []string) int {
	fs := newFlags(c, "uncordon", uncordonUsage)
	kf := addKubeFlags(fs)
	all := fs.Bool("all", false, "every node Drainpipe holds")
	selector := fs.String("l", "", "nodes matching this label selector (those Drainpipe holds)")
	dryRun := addDryRun(fs, "say what would be given back; write nothing (API server dry run)")
	yes := addYes(fs, "--all or -l: give the nodes back without asking")
	force := fs.Bool("force", false, "also give back nodes whose deadline has not passed (a Spot warning still running)")
	names, code := parseArgs(fs, args)
	if code >= 0 {
		return code
	}
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(c.Stderr, "drainpipe uncordon: "+format+"\n", a...)
		return code
	}
	ways := 0
	for _, set := range []bool{len(names) > 0, *all, *selector != ""} {
		if set {
			ways++
		}
	}
	if ways != 1 {
		return fail(exitUsage, "name the nodes, or give --all or -l SELECTOR (exactly one of them)")
	}
	if *selector != "" {
		if _, err := labels.Parse(*selector); err != nil {
			return fail(exitUsage, "-l %q: %v", *selector, err)
		}
	}
	// Started before the kubeconfig is read: client-go logs from then on.
	s, _ := start(c, "uncordon", startSpec{})
	defer s.end()
	client, err := kf.client(ctx, c)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, nodeTimeout)
	defer cancel()
	nodes, code := readNodes(ctx, s, client, names, *selector)
	if nodes == nil && code != exitOK {
		return code
	}
	verb, prefix := "given back", ""
	if *dryRun {
		verb, prefix = "would be given back", "dry run: "
	}
	now := time.Now()
	todo := nodes[:0]
	for _, n := range nodes {
		if why := liveDeadline(n, now); why != "" && !*force {
			fmt.Fprintf(c.Stdout, "%snode %s left as it is: %s; --force gives it back anyway\n", prefix, n.Name, why)
			continue
		}
		todo = append(todo, n)
	}
	if len(names) == 0 && !*dryRun && !*yes {
		if what := planUncordon(ctx, client, todo); what != "" && !confirmed(c, "uncordon", what, "; --dry-run shows the changes", false) {
			return exitUsage
		}
	}
	for _, n := range todo {
		g, err := drain.UncordonRead(ctx, client, n, drain.Match{DryRun: *dryRun})
		switch {
		case err != nil:
			code = s.fail(exitFail, err)
		case !g.Back:
			fmt.Fprintf(c.Stdout, "%snode %s left as it is: %s\n", prefix, g.Node, g.Reason)
		default:
			fmt.Fprintf(c.Stdout, "%snode %s %s: undid %s\n", prefix, g.Node, verb, strings.Join(g.Changed, ", "))
		}
	}
	return code
}
