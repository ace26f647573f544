package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/drain"
)

// nodeReport is `drainpipe nodes NODE`: the drain report kept on the node.
func nodeReport(ctx context.Context, c cli, s *session, client kubernetes.Interface, name string) int {
	node, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return s.failf(exitFail, "getting node %s: %w", name, err)
	}
	m := drain.ReadMarks(node)
	fmt.Fprintf(c.Stdout, "node %s: %s, event %s, deadline %s, held: %s\n", name, dash(m.Kind), dash(m.EventID), dash(m.Deadline), strings.Join(heldList(m), ","))
	for _, h := range m.Holds {
		fmt.Fprintf(c.Stdout, "hold %s: threat at %s, deadline %s, ends by %s, since %s\n", h.Key(), dash(h.Time), dash(h.Deadline),
			dash(h.End), dash(h.Since))
	}
	sum, ok := drain.ReadSummary(node)
	if !ok {
		fmt.Fprintln(c.Stdout, "no drain report on the node")
		return exitOK
	}
	printSummary(c.Stdout, sum)
	return exitOK
}

func printSummary(w io.Writer, s drain.Summary) {
	fmt.Fprintf(w, "drain %s: started %s, updated %s, %d run(s), last run %s\n", s.State, stamp(s.Started), stamp(s.Updated),
		s.Runs, time.Duration(s.RunMillis)*time.Millisecond)
	fmt.Fprintf(w, "evicted %d, terminating %d, not started %d\n", s.Evicted, s.Terminating, s.Pending)
	for _, b := range s.Blocked {
		what := "blocked"
		if b.Evicted {
			what = "was blocked"
		}
		fmt.Fprintf(w, "%s: %s by PodDisruptionBudget %s, %d refusals from %s to %s\n", what, b.Pod, dash(b.Budget), b.Refusals,
			stamp(b.First), stamp(b.Last))
	}
	for _, p := range s.DeletedAtDeadline {
		fmt.Fprintf(w, "deleted at the deadline: %s\n", p)
	}
	for _, p := range s.Stuck {
		fmt.Fprintf(w, "stuck terminating: %s\n", p)
	}
	for _, p := range s.Failed {
		fmt.Fprintf(w, "refused: %s: %s\n", p.Pod, p.Reason)
	}
	for _, p := range s.LeftOnPurpose {
		fmt.Fprintf(w, "left on purpose: %s: %s\n", p.Pod, p.Reason)
	}
	if s.More > 0 {
		fmt.Fprintf(w, "(%d more not kept)\n", s.More)
	}
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}
