package main

import (
	"fmt"
	"slices"
	"strings"
)

// Two runs of the same code on this 2-core machine gave the bound's
// cordon p99 as 0.16 s and 0.31 s: a ratio of two p99s of one run each
// is as much the machine as the code. -rounds N runs the peers N times,
// each round's runs back to back (so a ratio pairs runs that shared the
// machine's state), and roundsLine gives every round's ratios (against
// that round's bound, as the last line's) and their median.

// roundsLine sums up rounds of drainpipe and floor runs; false with fewer
// than two rounds that ran both.
func roundsLine(rounds []map[string]*result) (string, bool) {
	var cordon, drained, dpCordon, flCordon []float64
	for _, res := range rounds {
		dp, fl := res["drainpipe"], res["floor"]
		if dp == nil || fl == nil {
			continue
		}
		floorCordon, floorDrained := floors(res)
		cordon = append(cordon, ratio(dp.cordonP99, floorCordon))
		drained = append(drained, ratio(dp.drainedP99, floorDrained))
		dpCordon = append(dpCordon, secs(dp.cordonP99))
		flCordon = append(flCordon, secs(floorCordon))
	}
	if len(cordon) < 2 {
		return "", false
	}
	return fmt.Sprintf("bench rounds=%d: cordon_p99s=%s floor_cordon_p99s=%s ratio_cordons=%s ratio_limits=%s "+
		"median_ratio_cordon=%.2f median_ratio_limit=%.2f",
		len(cordon), joined(dpCordon), joined(flCordon), joined(cordon), joined(drained),
		median(cordon), median(drained)), true
}

func joined(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprintf("%.2f", x)
	}
	return strings.Join(s, ",")
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
