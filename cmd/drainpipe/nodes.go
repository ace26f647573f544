package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/eks"
)

// nodeTimeout bounds the API calls of `nodes` and `uncordon`.
const nodeTimeout = time.Minute

// kubeClient parses --kubeconfig and --context and returns the client of
// that cluster; without --kubeconfig it uses $KUBECONFIG or ~/.kube/config.
func kubeClient(ctx context.Context, c cli, name string, args []string, usage string) (kubernetes.Interface, []string, int) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(c.Stderr)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the cluster (default $KUBECONFIG, then ~/.kube/config)")
	kctx := fs.String("context", "", "kubeconfig context (default its current context)")
	fs.Usage = func() {
		fmt.Fprintln(c.Stderr, usage)
		fs.PrintDefaults()
	}
	rest, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return nil, nil, exitOK
	}
	if err != nil {
		return nil, nil, exitUsage
	}
	path := *kubeconfig
	if path == "" {
		path, _, _ = strings.Cut(c.Getenv("KUBECONFIG"), string(os.PathListSeparator))
	}
	if path == "" {
		if home, err := os.UserHomeDir(); err == nil {
			path = filepath.Join(home, ".kube", "config")
		}
	}
	local, err := eks.NewLocal(path, 0, 0)
	if err != nil {
		fmt.Fprintf(c.Stderr, "drainpipe %s: %v\n", name, err)
		return nil, nil, exitUsage
	}
	client, err := local.Client(ctx, *kctx)
	if err != nil {
		fmt.Fprintf(c.Stderr, "drainpipe %s: %v\n", name, err)
		return nil, nil, exitUsage
	}
	return client, rest, -1
}

const nodesUsage = `usage: drainpipe nodes [--kubeconfig PATH] [--context NAME] [NODE]

Lists the nodes Drainpipe holds out of service: kind, event id, deadline,
since when, and what it took (cordon, taint, out-of-service taint). With
NODE, shows that node's drain report: what was evicted, what blocks it
(pod, PodDisruptionBudget, refusals), what was deleted at the deadline,
stuck, or left on purpose.

Flags:`

// nodes is `drainpipe nodes`.
func nodes(ctx context.Context, c cli, args []string) int {
	client, rest, code := kubeClient(ctx, c, "nodes", args, nodesUsage)
	if code >= 0 {
		return code
	}
	ctx, cancel := context.WithTimeout(ctx, nodeTimeout)
	defer cancel()
	switch len(rest) {
	case 0:
	case 1:
		return nodeReport(ctx, c, client, rest[0])
	default:
		fmt.Fprintf(c.Stderr, "drainpipe nodes: unexpected argument %q\n", rest[1])
		return exitUsage
	}
	list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		fmt.Fprintf(c.Stderr, "drainpipe nodes: listing nodes: %v\n", err)
		return exitInput
	}
	w := tabwriter.NewWriter(c.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NODE\tKIND\tEVENT\tDEADLINE\tSINCE\tHELD")
	for i := range list.Items {
		m := drain.ReadMarks(&list.Items[i])
		if !m.Held() {
			continue
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", m.Node, dash(m.Kind), dash(m.EventID), dash(m.Deadline), dash(m.Since), held(m))
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintf(c.Stderr, "drainpipe nodes: writing: %v\n", err)
		return exitInput
	}
	return exitOK
}

func held(m drain.Marks) string {
	var what []string
	if m.Cordoned {
		what = append(what, "cordon")
	}
	if m.Tainted {
		what = append(what, "taint")
	}
	if m.OutOfSvc {
		what = append(what, "out-of-service")
	}
	if m.Karpenter {
		what = append(what, "karpenter-disrupting")
	}
	return dash(strings.Join(what, ","))
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

const uncordonUsage = `usage: drainpipe uncordon [--kubeconfig PATH] [--context NAME] NODE

Gives NODE back exactly as Drainpipe does when a threat passes: removes its
taints and annotations, makes it schedulable only if Drainpipe cordoned it,
and restores the load-balancer exclusion label's previous value. A node
Karpenter is disrupting is left alone.

Flags:`

// uncordon is `drainpipe uncordon NODE`.
func uncordon(ctx context.Context, c cli, args []string) int {
	client, rest, code := kubeClient(ctx, c, "uncordon", args, uncordonUsage)
	if code >= 0 {
		return code
	}
	if len(rest) != 1 {
		fmt.Fprintf(c.Stderr, "drainpipe uncordon: want one node name, got %d arguments\n", len(rest))
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(ctx, nodeTimeout)
	defer cancel()
	g, err := drain.Uncordon(ctx, client, rest[0], drain.Match{})
	if err != nil {
		fmt.Fprintf(c.Stderr, "drainpipe uncordon: %v\n", err)
		return exitInput
	}
	if !g.Back {
		fmt.Fprintf(c.Stdout, "node %s left as it is: %s\n", g.Node, g.Reason)
		return exitOK
	}
	fmt.Fprintf(c.Stdout, "node %s given back: undid %s\n", g.Node, strings.Join(g.Changed, ", "))
	return exitOK
}
