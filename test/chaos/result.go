package chaos

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// Result is what one scenario's invariants found.
type Result struct {
	Scenario string
	// Messages in the queue (at-least-once copies included), their
	// receives, receives after the first, dead-lettered ones and those
	// neither deleted nor dead-lettered (lost).
	Messages, Receives, Redeliveries, DLQ, Lost int
	// Hooks of the wave; completed once, completed while their node had
	// evictable pods (not on a last delivery), completed undrained on a
	// last delivery (allowed, loudly), completed twice, left open.
	Hooks, Completed, Early, LastDelivery, Double, Open int
	// Drainable targets (not blocked by a budget), those drained, those
	// drained after their Spot notice.
	Drainable, Drained, Late int
	Elapsed                  time.Duration
	Notes                    []string // what the fault did
	LogTail                  []string // the bootstraps' last lines, when an invariant broke
	// Problems names each broken invariant; empty when all held.
	Problems []string
}

// OK reports whether every invariant held.
func (r Result) OK() bool { return len(r.Problems) == 0 }

// PrintTable writes one row per scenario and the summary line:
//
//	chaos: scenarios=<n> messages=<m> lost=<n> early_completions=<n> double_completions=<n> hooks_open=<n>
func PrintTable(w io.Writer, results []Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\tmessages\tredeliveries\tdlq\tlost\thooks done/early/last/double/open\tdrained\ttime\tinvariants")
	var sum Result
	for _, r := range results {
		verdict := "held"
		if !r.OK() {
			verdict = fmt.Sprintf("%d broken", len(r.Problems))
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d/%d/%d/%d/%d of %d\t%d/%d\t%.0fs\t%s\n", r.Scenario, r.Messages, r.Redeliveries,
			r.DLQ, r.Lost, r.Completed, r.Early, r.LastDelivery, r.Double, r.Open, r.Hooks, r.Drained, r.Drainable,
			r.Elapsed.Seconds(), verdict)
		sum.Messages += r.Messages
		sum.Lost += r.Lost
		sum.Early += r.Early
		sum.Double += r.Double
		sum.Open += r.Open
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range results {
		for _, n := range r.Notes {
			fmt.Fprintf(w, "  %s: %s\n", r.Scenario, n)
		}
		for _, p := range r.Problems {
			fmt.Fprintf(w, "  %s: BROKEN: %s\n", r.Scenario, p)
		}
	}
	_, err := fmt.Fprintf(w, "chaos: scenarios=%d messages=%d lost=%d early_completions=%d double_completions=%d hooks_open=%d\n",
		len(results), sum.Messages, sum.Lost, sum.Early, sum.Double, sum.Open)
	return err
}
