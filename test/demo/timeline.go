package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/drainpipe/drainpipe/test/awsfake"
)

// step is one line of a timeline.
type step struct {
	at   time.Time
	what string
}

// names shortens what the timeline prints: node names to "node N",
// pods to their name within the demo's namespace.
type names struct {
	nodes     map[string]string
	namespace string
}

func (n names) node(name string) string {
	if short, ok := n.nodes[name]; ok {
		return short
	}
	return name
}

func (n names) pod(key string) string { return strings.TrimPrefix(key, n.namespace+"/") }

// logSteps turns the bootstrap's JSON log lines into steps: the drain
// engine's cordon, skip, eviction, refusal and departure lines, the end of
// the drain, and each record's outcome. Other info and debug lines are
// plumbing, left out; warnings and errors are kept.
//
// A pod with no grace period can be seen gone by the drain's watch a moment
// before the eviction's own answer is logged; that pair is shown as one
// "evicted, gone at once" step rather than as a departure before its cause.
func logSteps(records []map[string]any, n names) []step {
	var out []step
	goneEarly := map[string]int{} // pod → index in out of a gone step with no eviction yet
	evicted := map[string]bool{}
	for _, r := range records {
		str := func(k string) string { s, _ := r[k].(string); return s }
		num := func(k string) int64 { f, _ := r[k].(float64); return int64(f) }
		at, err := time.Parse(time.RFC3339Nano, str("time"))
		if err != nil {
			continue
		}
		var what string
		switch msg := str("msg"); msg {
		case "node cordoned":
			what = fmt.Sprintf("cordoned      %s: unschedulable, tainted drainpipe.dev/interruption", n.node(str("node")))
		case "node already cordoned":
			what = fmt.Sprintf("cordoned      %s (already)", n.node(str("node")))
		case "pod skipped":
			what = fmt.Sprintf("left alone    %s (%s)", n.pod(str("pod")), str("reason"))
		case "pod evicted":
			grace := "its own grace period"
			if g := num("grace_seconds"); g >= 0 {
				grace = fmt.Sprintf("grace %d s", g)
			}
			pod := str("pod")
			evicted[pod] = true
			what = fmt.Sprintf("evicted       %s (%s)", n.pod(pod), grace)
			if i, ok := goneEarly[pod]; ok {
				out[i].what = ""
				what = fmt.Sprintf("evicted       %s (%s), gone at once", n.pod(pod), grace)
			}
		case "eviction blocked by disruption budget; retrying":
			what = fmt.Sprintf("blocked       %s by its PodDisruptionBudget; retrying", n.pod(str("pod")))
		case "pod gone":
			what = fmt.Sprintf("gone          %s", n.pod(str("pod")))
			if !evicted[str("pod")] {
				goneEarly[str("pod")] = len(out)
			}
		case "drain stopped":
			evicted, left := drainCounts(r)
			what = fmt.Sprintf("drain ended   %s: done=%v, %d evicted, %d left alone", n.node(str("node")),
				r["done"], evicted, left)
		case "record handled":
			what = fmt.Sprintf("record %s   %s", str("outcome"), str("reason"))
		default:
			if lvl := str("level"); lvl == "WARN" || lvl == "ERROR" {
				what = fmt.Sprintf("%-13s %s", strings.ToLower(lvl), msg)
			}
		}
		if what != "" {
			out = append(out, step{at: at, what: what})
		}
	}
	return slices.DeleteFunc(out, func(s step) bool { return s.what == "" })
}

// drainCounts reads a "drain stopped" line's report (the drain report as
// kept on the node): pods evicted, and pods left on purpose (DaemonSet,
// mirror, tolerating, finished).
func drainCounts(r map[string]any) (evicted, left int) {
	rep, _ := r["report"].(map[string]any)
	n, _ := rep["evicted"].(float64)
	kept, _ := rep["leftOnPurpose"].([]any)
	return int(n), len(kept)
}

// callSteps turns the calls the AWS fakes received into steps.
func callSteps(calls []awsfake.Call) []step {
	out := make([]step, 0, len(calls))
	for _, c := range calls {
		what := fmt.Sprintf("AWS           %s:%s", c.Service, c.Action)
		if r := c.Params.Get("LifecycleActionResult"); r != "" {
			what += " " + r + " (hook completed: the instance may go)"
		}
		if c.Fault != 0 {
			what += " (answered with a fault)"
		}
		out = append(out, step{at: c.Time, what: what})
	}
	return out
}

// printTimeline prints steps in time order with millisecond offsets from
// received, which is the first line.
func printTimeline(w io.Writer, received time.Time, steps []step) {
	steps = append([]step{{at: received, what: "received      the SQS event"}}, steps...)
	slices.SortStableFunc(steps, func(a, b step) int { return a.at.Compare(b.at) })
	for _, s := range steps {
		fmt.Fprintf(w, "  %+8.1f ms  %s\n", float64(s.at.Sub(received).Microseconds())/1000, s.what)
	}
}
