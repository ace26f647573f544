package main

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/drainpipe/drainpipe/test/fleet"
)

// never is what fleet.Percentile gives a share of nodes never reached.
const never = time.Duration(math.MaxInt64)

// pct is the p-th percentile of per-node times (zero: never), printed in
// seconds: "inf" when it lands on a node never reached, "-" when there
// are no nodes (a class without nodes).
func pct(ds []time.Duration, p float64) string {
	if len(ds) == 0 {
		return "-"
	}
	return secsString(fleet.Percentile(ds, p))
}

func secsString(d time.Duration) string {
	if d == never {
		return "inf" // strconv.ParseFloat reads it
	}
	return fmt.Sprintf("%.2f", d.Seconds())
}

// spread is a per-round value's median, minimum and maximum; ok is false
// without rounds.
type spread struct {
	med, lo, hi float64
	ok          bool
}

func spreadOf(v []float64) spread {
	if len(v) == 0 {
		return spread{}
	}
	return spread{med: median(v), lo: slices.Min(v), hi: slices.Max(v), ok: true}
}

// String is the median, or "-" without rounds.
func (s spread) String() string {
	if !s.ok {
		return "-"
	}
	return fmt.Sprintf("%.2f", s.med)
}

// median is the middle value, or the mean of the middle two.
func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// roundOrder is the order the peers run in a round: as given in even
// rounds, reversed in odd ones, so that no peer always runs first on a
// machine still cooling from the run before, or last on a warm one.
func roundOrder(peers []string, round int) []string {
	out := slices.Clone(peers)
	if round%2 == 1 {
		slices.Reverse(out)
	}
	return out
}
