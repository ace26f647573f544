package main

import (
	"slices"
	"time"
)

// budgetLoad is one disruption budget's part in the wave: how many of its
// pods it lets go at once and how many of them sit on each target node.
type budgetLoad struct {
	Name    string
	Allowed int            // status.expectedPods − status.desiredHealthy
	OnNode  map[string]int // its evictable pods per target node
}

// drainCycles is the first-principles floor of a drain: for q = 1..nodes,
// how many replacement cycles must pass before q target nodes can be
// drained (-1: never, a budget allowing nothing holds a pod on them).
//
// A budget allowing a at once can have let at most a·(j+1) of its pods go
// by the end of cycle j, whatever the strategy: each eviction holds a slot
// until its replacement is Ready and the budget is recomputed (one cycle,
// measured). Its r pods still to go sit on at least cover(r) nodes: the
// fewest nodes holding r of them, the strategy's best case. So no more
// than nodes − max over budgets of cover(r) nodes are drained during cycle
// j. Pods without a budget can all go in cycle 0.
func drainCycles(nodes int, budgets []budgetLoad) []int {
	type load struct {
		allowed, total int
		counts         []int // per node, largest first
	}
	var loads []load
	last := 0
	for _, b := range budgets {
		l := load{allowed: b.Allowed}
		for _, n := range b.OnNode {
			if n > 0 {
				l.counts = append(l.counts, n)
				l.total += n
			}
		}
		if l.total == 0 {
			continue
		}
		slices.Sort(l.counts)
		slices.Reverse(l.counts)
		if l.allowed > 0 {
			last = max(last, (l.total+l.allowed-1)/l.allowed-1)
		}
		loads = append(loads, l)
	}
	out := make([]int, nodes)
	for q := range out {
		out[q] = -1
	}
	q := 0 // ranks settled so far
	for j := 0; j <= last && q < nodes; j++ {
		held := 0
		for _, l := range loads {
			left := l.total - l.allowed*(j+1)
			if l.allowed <= 0 {
				left = l.total
			}
			held = max(held, cover(l.counts, left))
		}
		for ; q < nodes-held; q++ {
			out[q] = j
		}
	}
	return out
}

// cover is the fewest nodes holding r pods, given per-node counts largest
// first.
func cover(counts []int, r int) int {
	n := 0
	for _, c := range counts {
		if r <= 0 {
			break
		}
		r -= c
		n++
	}
	return n
}

// cycleStarts is, for each cycle j up to last, the earliest time after the
// first cordon that cycle j's evictions can begin: j replacement cycles
// (one after another, no faster than the fastest measured) and, as the
// control plane's throughput bounds them too, the replacements cycle j
// waits for at the rate the control plane turned evicted pods into Ready
// replacements when measured (replacementsBefore). rate 0: no throughput
// term.
func cycleStarts(last int, budgets []budgetLoad, cycle time.Duration, rate float64) []time.Duration {
	out := make([]time.Duration, last+1)
	for j := range out {
		out[j] = time.Duration(j) * cycle
		if rate > 0 {
			out[j] = max(out[j], time.Duration(float64(replacementsBefore(j, budgets))/rate*float64(time.Second)))
		}
	}
	return out
}

// replacementsBefore is the fewest replacements that must be Ready before
// cycle j: a budget allowing a that still has pods to let go after a·j
// of them needs all a·j of their replacements Ready (each grant after the
// first a waits for one). Budgets done by then need nothing more.
func replacementsBefore(j int, budgets []budgetLoad) int {
	n := 0
	for _, b := range budgets {
		total := 0
		for _, c := range b.OnNode {
			total += c
		}
		if b.Allowed > 0 && total > b.Allowed*j {
			n += b.Allowed * j
		}
	}
	return n
}

// floorTimes combines the two floors into one per rank: the q-th node
// drained no earlier than the q-th cordoned on the fastest path (sorted
// cordon times, zero: never) nor than its cycle can start (starts, from
// cycleStarts), counted from the first node the fastest path reached.
// Zero: never.
func floorTimes(cordoned []time.Duration, cycles []int, starts []time.Duration) []time.Duration {
	c := slices.Clone(cordoned)
	slices.SortFunc(c, func(a, b time.Duration) int { return cmpNever(a, b) })
	out := make([]time.Duration, len(c))
	if len(c) == 0 || c[0] == 0 {
		return out
	}
	for q := range c {
		if c[q] == 0 || q >= len(cycles) || cycles[q] < 0 || cycles[q] >= len(starts) {
			continue // never
		}
		out[q] = max(c[q], c[0]+starts[cycles[q]])
	}
	return out
}

// cmpNever orders durations with zero (never) last.
func cmpNever(a, b time.Duration) int {
	switch {
	case a == b:
		return 0
	case a == 0:
		return 1
	case b == 0:
		return -1
	case a < b:
		return -1
	}
	return 1
}
