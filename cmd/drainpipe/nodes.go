package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/drainpipe/drainpipe/internal/drain"
)

const nodesUsage = `usage: drainpipe nodes [--kubeconfig PATH] [--context NAME] [-o wide|json] [NODE]

Lists the nodes Drainpipe holds out of service: kind, event id, deadline,
since when, and what it took (cordon, taint, out-of-service taint). With
NODE, shows that node's drain report: what was evicted, what blocks it
(pod, PodDisruptionBudget, refusals), what was deleted at the deadline,
stuck, or left on purpose.
-o wide adds the instance (from the provider ID) and the node's zone;
-o json prints one JSON array of the same fields, [] when none is held.

Exits 0 when listed, 1 when the nodes cannot be read or the output
written, 2 on bad arguments (an unknown --context included).

Flags:`

// heldNode is one line of `drainpipe nodes`.
type heldNode struct {
	drain.Marks
	Held     []string `json:"held"`
	Instance string   `json:"instance,omitempty"`
	Zone     string   `json:"zone,omitempty"`
}

// nodes is `drainpipe nodes`.
func nodes(ctx context.Context, c cli, args []string) int {
	fs := newFlags(c, "nodes", nodesUsage)
	kf := addKubeFlags(fs)
	output := addOutput(fs, "output format: wide or json (default a table)")
	rest, code := parseArgs(fs, args)
	if code >= 0 {
		return code
	}
	var bad problems
	if len(rest) > 1 {
		bad.none(rest[1:])
	}
	bad.output(*output, "wide", "json")
	if code := bad.report(c, "nodes"); code >= 0 {
		return code
	}
	// Started before the kubeconfig is read: client-go logs from then on.
	s, _ := start(c, "nodes", startSpec{})
	defer s.end()
	client, err := kf.client(ctx, c)
	if err != nil {
		return problems{err.Error()}.report(c, "nodes")
	}
	ctx, cancel := context.WithTimeout(ctx, nodeTimeout)
	defer cancel()
	if len(rest) == 1 {
		return nodeReport(ctx, c, s, client, rest[0])
	}
	list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return s.failf(exitFail, "listing nodes: %w", err)
	}
	held := []heldNode{}
	for i := range list.Items {
		n := &list.Items[i]
		if m := drain.ReadMarks(n); m.Held() {
			held = append(held, heldNode{Marks: m, Held: heldList(m), Instance: instanceOf(n), Zone: n.Labels[corev1.LabelTopologyZone]})
		}
	}
	if err := printNodes(c.Stdout, held, *output); err != nil {
		return s.failf(exitFail, "writing: %w", err)
	}
	return exitOK
}

func printNodes(out io.Writer, held []heldNode, format string) error {
	if format == "json" {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(held)
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	wide := format == "wide"
	header := "NODE\tKIND\tEVENT\tDEADLINE\tSINCE\tHELD"
	if wide {
		header += "\tINSTANCE\tZONE\tHOLDS"
	}
	fmt.Fprintln(w, header)
	for _, h := range held {
		m := h.Marks
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s", m.Node, dash(m.Kind), dash(m.EventID), dash(m.Deadline), dash(m.Since),
			dash(strings.Join(h.Held, ",")))
		if wide {
			fmt.Fprintf(w, "\t%s\t%s\t%s", dash(h.Instance), dash(h.Zone), dash(strings.Join(m.Holds.Keys(), ",")))
		}
		fmt.Fprintln(w)
	}
	return w.Flush()
}

func heldList(m drain.Marks) []string {
	what := []string{}
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
	return what
}

// instanceOf is the EC2 instance ID at the end of an AWS provider ID
// (aws:///us-east-1a/i-0123…), or "".
func instanceOf(n *corev1.Node) string {
	if i := strings.LastIndex(n.Spec.ProviderID, "/"); i >= 0 && strings.HasPrefix(n.Spec.ProviderID[i+1:], "i-") {
		return n.Spec.ProviderID[i+1:]
	}
	return ""
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
