package kevents

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/drainpipe/drainpipe/internal/drain"
)

// startMessage says what is about to happen to the node, and by when.
func startMessage(req drain.Request) string {
	what := "Cordoning"
	if req.Evict {
		what = "Cordoning and draining"
	}
	s := fmt.Sprintf("%s the node: %s", what, strings.ReplaceAll(req.Kind, "-", " "))
	if req.EventID != "" {
		s += " (event " + req.EventID + ")"
	}
	if !req.Deadline.IsZero() {
		s += "; the instance goes at " + req.Deadline.UTC().Format(time.RFC3339)
	}
	return s
}

func evictedMessage(req drain.Request, e drain.Event) string {
	s := fmt.Sprintf("Evicted from node %s: %s", e.Node, strings.ReplaceAll(req.Kind, "-", " "))
	if e.GraceSeconds >= 0 {
		s += fmt.Sprintf(", grace period shortened to %ds", e.GraceSeconds)
	}
	if !req.Deadline.IsZero() {
		s += "; the instance goes at " + req.Deadline.UTC().Format(time.RFC3339)
	}
	return s
}

// outcome is the node event closing a run, when there is one to tell:
// drained, blocked by budgets, or unfinished. A plain cordon has none.
func outcome(req drain.Request, rep drain.Report) (typ, reason, msg string, ok bool) {
	if !req.Evict {
		return "", "", "", false
	}
	if rep.Done {
		return corev1.EventTypeNormal, ReasonDrained, fmt.Sprintf("Drained in %s: %d pods evicted, %d left in place",
			rep.Elapsed.Round(time.Millisecond), len(rep.Evicted), len(rep.Skipped)), true
	}
	if len(rep.BlockedByPDB) > 0 {
		return corev1.EventTypeWarning, ReasonDrainBlocked, fmt.Sprintf("%d pods blocked by PodDisruptionBudgets when the drain stopped%s: %s",
			len(rep.BlockedByPDB), until(req.Deadline), list(blockedBy(rep))), true
	}
	return corev1.EventTypeWarning, ReasonDrainUnfinished, fmt.Sprintf("Drain stopped unfinished: %d pods still terminating, %d not evicted yet, %d refused",
		len(rep.Terminating), len(rep.Pending), len(rep.Failed)), true
}

func until(deadline time.Time) string {
	if deadline.IsZero() {
		return ""
	}
	return " (instance deadline " + deadline.UTC().Format(time.RFC3339) + ")"
}

// list names the first few pods.
func list(pods []string) string {
	const most = 5
	if len(pods) <= most {
		return strings.Join(pods, ", ")
	}
	return strings.Join(pods[:most], ", ") + fmt.Sprintf(" and %d more", len(pods)-most)
}

// blockedBy names each blocked pod with its budget and refusals.
func blockedBy(rep drain.Report) []string {
	out := make([]string, 0, len(rep.BlockedByPDB))
	for _, b := range rep.Blocks {
		if b.Evicted {
			continue
		}
		s := b.Pod
		if b.Budget != "" {
			s += " (PodDisruptionBudget " + b.Budget + fmt.Sprintf(", %d refusals)", b.Refusals)
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return rep.BlockedByPDB
	}
	return out
}
