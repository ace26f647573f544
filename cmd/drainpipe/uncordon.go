package main

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/drain"
)

const uncordonUsage = `usage: drainpipe uncordon [--kubeconfig PATH] [--context NAME] [--dry-run] NODE... | --all | -l SELECTOR

Gives nodes back exactly as Drainpipe does when a threat passes: removes its
taints and annotations, makes a node schedulable only if Drainpipe cordoned
it, and restores the load-balancer exclusion label's previous value. A node
Karpenter is disrupting, or without Drainpipe's marks, is left alone.
--all takes every node Drainpipe holds; -l those of a label selector (the
ones Drainpipe holds among them). --dry-run sends the changes as an API
server dry run: the same answers, nothing written.

One line per node on standard output. Exits 0 when every node was given back
or left alone, 1 when one could not be read or changed, 2 on bad arguments.

Flags:`

// uncordon is `drainpipe uncordon`.
func uncordon(ctx context.Context, c cli, args []string) int {
	fs := newFlags(c, "uncordon", uncordonUsage)
	kf := addKubeFlags(fs)
	all := fs.Bool("all", false, "every node Drainpipe holds")
	selector := fs.String("l", "", "nodes matching this label selector (those Drainpipe holds)")
	dryRun := fs.Bool("dry-run", false, "say what would be given back; write nothing (API server dry run)")
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
	client, err := kf.client(ctx, c)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, nodeTimeout)
	defer cancel()
	if len(names) == 0 {
		if names, err = heldNodes(ctx, client, *selector); err != nil {
			return fail(exitFail, "%v", err)
		}
	}
	verb, prefix := "given back", ""
	if *dryRun {
		verb, prefix = "would be given back", "dry run: "
	}
	code = exitOK
	for _, name := range names {
		g, err := drain.Uncordon(ctx, client, name, drain.Match{DryRun: *dryRun})
		switch {
		case err != nil:
			fmt.Fprintf(c.Stderr, "drainpipe uncordon: %v\n", err)
			code = exitFail
		case !g.Back:
			fmt.Fprintf(c.Stdout, "%snode %s left as it is: %s\n", prefix, g.Node, g.Reason)
		default:
			fmt.Fprintf(c.Stdout, "%snode %s %s: undid %s\n", prefix, g.Node, verb, strings.Join(g.Changed, ", "))
		}
	}
	return code
}

// heldNodes lists the nodes (matching selector, when set) that carry
// Drainpipe's marks.
func heldNodes(ctx context.Context, client kubernetes.Interface, selector string) ([]string, error) {
	list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	var names []string
	for i := range list.Items {
		if drain.ReadMarks(&list.Items[i]).Held() {
			names = append(names, list.Items[i].Name)
		}
	}
	return names, nil
}
