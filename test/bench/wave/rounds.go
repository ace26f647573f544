package main

import (
	"fmt"
	"strings"
	"time"
)

// A ratio of two p99s of one run each is as much the machine as the code
// (two runs of the same floor gave 0.16 s and 0.31 s), so -rounds N runs
// the peers N times, in alternating order, and every round's ratios are
// printed with their median, minimum and maximum. Each ratio pairs
// Drainpipe's run with the references run in the same round, and is not
// clamped: a reference slower than Drainpipe gives a ratio below 1.

// strategies are the runs that drain by a strategy of their own, the
// candidates for the best strategy; Drainpipe's runs are not among them.
var strategies = []string{"floor", "floor-inproc", "paced", "limit", "nth"}

// roundRatios is one round's references and Drainpipe's ratios to them;
// a ratio is 0 when its reference did not run.
type roundRatios struct {
	cordonRef, best, lowerBound time.Duration
	bestName                    string
	cordon, bestRatio, lower    float64
	nth                         float64
	// cordon2qRef is floor-2q's cordon p99, cordon2q Drainpipe's to it.
	cordon2qRef time.Duration
	cordon2q    float64
}

// ratiosOf computes a round's ratios; false unless drainpipe ran.
//   - cordon: to the fastest cordon p99 of the floor's runs (floor,
//     floor-inproc), the unavoidable path of a serverless handler;
//   - best strategy: to the lowest drained p99 of the strategies run, among
//     those that drained every node and lost no pod if any did. It is a
//     reference, not a bound: a better strategy may exist;
//   - lower bound: to the floor's first-principles figure (its measured
//     cordons, then the budgets' replacement cycles, each no sooner than
//     the measured replacement rate allows). No drain can beat it;
//   - nth: the NTH-style peer's drained p99 to Drainpipe's;
//   - cordon 2q: to floor-2q's cordon p99, the floor through Drainpipe's
//     two queues (each notice cordoned from both): what cordoning a wave
//     wider than the work queue within its first second costs any handler.
func ratiosOf(res map[string]*result) (roundRatios, bool) {
	dp := res["drainpipe"]
	if dp == nil {
		return roundRatios{}, false
	}
	var rr roundRatios
	for _, peer := range []string{"floor", "floor-inproc"} {
		if r := res[peer]; r != nil && r.cordonP99 > 0 && r.cordonP99 != never && (rr.cordonRef == 0 || r.cordonP99 < rr.cordonRef) {
			rr.cordonRef = r.cordonP99
		}
	}
	clean := false
	for _, peer := range strategies {
		r := res[peer]
		if r == nil || r.cordonOnly || r.drainedP99 <= 0 || r.drainedP99 == never {
			continue
		}
		ok := r.undrained == 0 && r.lost == 0
		if rr.best == 0 || (ok && !clean) || (ok == clean && r.drainedP99 < rr.best) {
			rr.best, rr.bestName, clean = r.drainedP99, peer, ok
		}
	}
	if fl := res["floor"]; fl != nil {
		rr.lowerBound = fl.firstPrinciples
	}
	rr.cordon = ratio(dp.cordonP99, rr.cordonRef)
	rr.bestRatio = ratio(dp.drainedP99, rr.best)
	rr.lower = ratio(dp.drainedP99, rr.lowerBound)
	if nt := res["nth"]; nt != nil {
		rr.nth = ratio(nt.drainedP99, dp.drainedP99)
	}
	if f2 := res["floor-2q"]; f2 != nil && f2.cordonP99 > 0 && f2.cordonP99 != never {
		rr.cordon2qRef = f2.cordonP99
		rr.cordon2q = ratio(dp.cordonP99, f2.cordonP99)
	}
	return rr, true
}

// ratioSeries is every round's values, in round order, each series
// holding only the rounds where its reference ran.
type ratioSeries struct {
	orders                             []string
	dpCordon, cordonRef, dpDrained     []float64
	best, lowerBound                   []float64
	bestNames                          []string
	cordon, bestRatio, lowerRatio, nth []float64
	cordon2qRef, cordon2q              []float64
}

func roundsRatios(rounds []map[string]*result) ratioSeries {
	var s ratioSeries
	for _, res := range rounds {
		rr, ok := ratiosOf(res)
		if !ok {
			continue
		}
		s.dpCordon = append(s.dpCordon, secs(res["drainpipe"].cordonP99))
		s.dpDrained = append(s.dpDrained, secs(res["drainpipe"].drainedP99))
		if rr.cordonRef > 0 {
			s.cordonRef = append(s.cordonRef, secs(rr.cordonRef))
			s.cordon = append(s.cordon, rr.cordon)
		}
		if rr.best > 0 {
			s.best = append(s.best, secs(rr.best))
			s.bestNames = append(s.bestNames, rr.bestName)
			s.bestRatio = append(s.bestRatio, rr.bestRatio)
		}
		if rr.lowerBound > 0 {
			s.lowerBound = append(s.lowerBound, secs(rr.lowerBound))
			s.lowerRatio = append(s.lowerRatio, rr.lower)
		}
		if rr.nth > 0 {
			s.nth = append(s.nth, rr.nth)
		}
		if rr.cordon2qRef > 0 {
			s.cordon2qRef = append(s.cordon2qRef, secs(rr.cordon2qRef))
			s.cordon2q = append(s.cordon2q, rr.cordon2q)
		}
	}
	return s
}

// roundsLine is every round's figures and the spread of each ratio;
// false unless drainpipe ran. orders names each round's run order.
func roundsLine(rounds []map[string]*result, orders [][]string) (string, bool) {
	s := roundsRatios(rounds)
	if len(s.dpCordon) == 0 {
		return "", false
	}
	var ord []string
	for _, o := range orders {
		ord = append(ord, strings.Join(o, ">"))
	}
	line := fmt.Sprintf("bench rounds=%d: orders=%s cordon_p99s=%s floor_cordon_p99s=%s drained_p99s=%s best_strategies=%s best_drained_p99s=%s fp_drained_p99s=%s "+
		"ratio_cordons=%s ratio_best_strategies=%s ratio_lower_bounds=%s floor2q_cordon_p99s=%s ratio_cordon_2qs=%s",
		len(s.dpCordon), strings.Join(ord, ","), joined(s.dpCordon), joined(s.cordonRef), joined(s.dpDrained), orDash(strings.Join(s.bestNames, ",")),
		joined(s.best), joined(s.lowerBound), joined(s.cordon), joined(s.bestRatio), joined(s.lowerRatio), joined(s.cordon2qRef), joined(s.cordon2q))
	for _, r := range []struct {
		name string
		v    []float64
	}{{"ratio_cordon", s.cordon}, {"ratio_best_strategy", s.bestRatio}, {"ratio_lower_bound", s.lowerRatio}, {"ratio_cordon_2q", s.cordon2q}} {
		sp := spreadOf(r.v)
		if !sp.ok {
			line += fmt.Sprintf(" %s_median=- %[1]s_min=- %[1]s_max=-", r.name)
			continue
		}
		line += fmt.Sprintf(" %[1]s_median=%.2[2]f %[1]s_min=%.2[3]f %[1]s_max=%.2[4]f", r.name, sp.med, sp.lo, sp.hi)
	}
	return line, true
}

func joined(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprintf("%.2f", x)
	}
	return orDash(strings.Join(s, ","))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
