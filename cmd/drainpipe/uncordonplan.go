package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/drain"
)

// readNodes reads the named nodes, or lists those Drainpipe holds (among
// the selector's, when set). A named node that cannot be read is reported
// and skipped (code exitFail); a failed LIST returns nil.
func readNodes(ctx context.Context, s *session, client kubernetes.Interface, names []string, selector string) ([]*corev1.Node, int) {
	if len(names) == 0 {
		list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return nil, s.failf(exitFail, "listing nodes: %w", err)
		}
		nodes := []*corev1.Node{}
		for i := range list.Items {
			if drain.ReadMarks(&list.Items[i]).Held() {
				nodes = append(nodes, &list.Items[i])
			}
		}
		return nodes, exitOK
	}
	code := exitOK
	nodes := []*corev1.Node{}
	for _, name := range names {
		n, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			code = s.failf(exitFail, "getting node %s: %w", name, err)
			continue
		}
		nodes = append(nodes, n)
	}
	return nodes, code
}

// liveDeadline says why a node Drainpipe holds must stay held for now:
// its drainpipe.dev/deadline (a Spot warning's two minutes, a capacity
// reservation's or block's end, a scheduled change's start) has not
// passed, so the instance may still be taken then. Empty when there is no
// deadline or it has passed.
func liveDeadline(node *corev1.Node, now time.Time) string {
	m := drain.ReadMarks(node)
	if m.Deadline == "" || !m.Held() {
		return ""
	}
	at, err := time.Parse(time.RFC3339, m.Deadline)
	if err != nil {
		return fmt.Sprintf("held for %s with a deadline that cannot be read (%q)", orDash(m.Kind), m.Deadline)
	}
	if !now.Before(at) {
		return ""
	}
	return fmt.Sprintf("held for %s whose deadline %s is %s away: the instance may still go then", orDash(m.Kind),
		m.Deadline, at.Sub(now).Round(time.Second))
}

// planUncordon asks the API server, as a dry run, what giving nodes back
// would change, and describes it; empty when no node would be given back
// (nothing to confirm).
func planUncordon(ctx context.Context, client kubernetes.Interface, nodes []*corev1.Node) string {
	var lines []string
	back := 0
	for _, n := range nodes {
		g, err := drain.UncordonRead(ctx, client, n, drain.Match{DryRun: true})
		switch {
		case err != nil:
			lines = append(lines, fmt.Sprintf("  node %s: cannot tell (%v)", n.Name, err))
		case g.Back:
			back++
			lines = append(lines, fmt.Sprintf("  node %s (%s): undo %s", n.Name, orDash(g.Marks.Kind), strings.Join(g.Changed, ", ")))
		}
	}
	if back == 0 && len(lines) == 0 {
		return ""
	}
	return fmt.Sprintf("give back %d node(s):\n%s", back, strings.Join(lines, "\n"))
}
