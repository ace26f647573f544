package main

import (
	"math"
	"strings"
	"testing"
	"time"
)

// TestRatiosAreNotClamped: a reference slower than Drainpipe gives a
// ratio below 1; Drainpipe's own run is never taken for a reference.
func TestRatiosAreNotClamped(t *testing.T) {
	s := time.Second
	res := map[string]*result{
		"drainpipe": {cordonP99: 300 * time.Millisecond, drainedP99: 36 * s},
		"floor":     {cordonP99: 400 * time.Millisecond, drainedP99: 50 * s, firstPrinciples: 9 * s},
		"paced":     {cordonP99: 200 * time.Millisecond, drainedP99: 45 * s},
	}
	rr, ok := ratiosOf(res)
	if !ok {
		t.Fatal("no ratios with drainpipe")
	}
	if math.Abs(rr.cordon-0.75) > 1e-9 || rr.cordonRef != 400*time.Millisecond {
		t.Errorf("cordon ratio %v to %v, want 0.75 to the floor's 0.4 s (the paced run's cordon is no reference)", rr.cordon, rr.cordonRef)
	}
	if rr.bestName != "paced" || math.Abs(rr.bestRatio-0.8) > 1e-9 {
		t.Errorf("best strategy %s at %v, want paced at 0.8", rr.bestName, rr.bestRatio)
	}
	if math.Abs(rr.lower-4) > 1e-9 {
		t.Errorf("lower-bound ratio %v, want 4", rr.lower)
	}
	// A strategy that lost pods is a reference only when none drained
	// cleanly.
	res["limit"] = &result{drainedP99: 20 * s, lost: 5}
	if rr, _ := ratiosOf(res); rr.bestName != "paced" {
		t.Errorf("best strategy %s, want paced (limit lost pods)", rr.bestName)
	}
	// A floor that only cordoned (-floor-drain=false) is the cordon's
	// reference and the lower bound's, never a drain strategy, however
	// its drained p99 reads (the run's bound).
	delete(res, "paced")
	res["floor"] = &result{cordonP99: 400 * time.Millisecond, drainedP99: 10 * s, firstPrinciples: 9 * s, cordonOnly: true, undrained: 56}
	if rr, _ := ratiosOf(res); rr.bestName != "limit" || rr.cordonRef != 400*time.Millisecond || rr.lowerBound != 9*s {
		t.Errorf("cordon-only floor: best %s, cordon reference %v, lower bound %v; want limit, 0.4s, 9s", rr.bestName, rr.cordonRef, rr.lowerBound)
	}
	delete(res, "floor")
	if rr, _ := ratiosOf(res); rr.bestName != "limit" || rr.cordon != 0 || rr.lower != 0 {
		t.Errorf("only limit: best %s, cordon %v, lower %v; want limit, 0, 0", rr.bestName, rr.cordon, rr.lower)
	}
}

func TestRoundsLineSpreadsEachRatio(t *testing.T) {
	ms := time.Millisecond
	round := func(dp, fl time.Duration) map[string]*result {
		return map[string]*result{
			"drainpipe": {cordonP99: dp, drainedP99: 50 * time.Second},
			"floor":     {cordonP99: fl, drainedP99: 40 * time.Second, firstPrinciples: 10 * time.Second},
		}
	}
	rounds := []map[string]*result{round(430*ms, 310*ms), round(300*ms, 400*ms), round(540*ms, 160*ms)}
	orders := [][]string{{"drainpipe", "floor"}, {"floor", "drainpipe"}, {"drainpipe", "floor"}}
	line, ok := roundsLine(rounds, orders)
	if !ok {
		t.Fatal("no rounds line for three rounds")
	}
	for _, want := range []string{"bench rounds=3:", "orders=drainpipe>floor,floor>drainpipe,drainpipe>floor ",
		"cordon_p99s=0.43,0.30,0.54 ", "floor_cordon_p99s=0.31,0.40,0.16 ", "ratio_cordons=1.39,0.75,3.38 ",
		"best_strategies=floor,floor,floor ", "ratio_best_strategies=1.25,1.25,1.25 ", "ratio_lower_bounds=5.00,5.00,5.00 ",
		"ratio_cordon_median=1.39 ratio_cordon_min=0.75 ratio_cordon_max=3.38", "ratio_lower_bound_median=5.00"} {
		if !strings.Contains(line, want) {
			t.Errorf("rounds line lacks %q:\n%s", want, line)
		}
	}
	if _, ok := roundsLine([]map[string]*result{{"floor": {}}}, nil); ok {
		t.Error("a rounds line without drainpipe")
	}
}

// TestPoolTakesEveryRoundsNodes: the pooled p99 is of every node of
// every round, not a median of per-round p99s.
func TestPoolTakesEveryRoundsNodes(t *testing.T) {
	s := time.Second
	var rounds []map[string]*result
	for i := range 3 {
		d := make([]time.Duration, 40)
		for j := range d {
			d[j] = time.Duration(j+1) * s
		}
		if i > 0 {
			d[39] = 100 * s // a slow node in two rounds
		}
		rounds = append(rounds, map[string]*result{"drainpipe": {targets: 40, drained: d, apf: 2, neighbour: neighbourResult{lat: []time.Duration{s}}}})
	}
	p, ok := pool(rounds, "drainpipe")
	if !ok || p.runs != 3 || len(p.drained) != 120 || p.apf != 6 {
		t.Fatalf("pooled %d runs, %d nodes, apf %d", p.runs, len(p.drained), p.apf)
	}
	if got := pct(p.drained, 99); got != "100.00" {
		t.Errorf("pooled p99 %s, want 100.00 (120 nodes: the 119th is a slow one)", got)
	}
	if _, ok := pool(rounds, "floor"); ok {
		t.Error("a pool of a peer that never ran")
	}
}

// TestCordonToTheFloorThroughTwoQueues: floor-2q, the floor deployed
// with Drainpipe's cordon queue, is a second cordon reference with its
// own ratio on the rounds line and the last line; it is neither the
// floor's reference nor a drain strategy, and it leaves ratio_cordon to
// the floor alone.
func TestCordonToTheFloorThroughTwoQueues(t *testing.T) {
	ms := time.Millisecond
	round := func(dp, fl, f2 time.Duration) map[string]*result {
		return map[string]*result{
			"drainpipe": {cordonP99: dp, drainedP99: 50 * time.Second, cordoned: []time.Duration{dp}},
			"floor":     {cordonP99: fl, drainedP99: 40 * time.Second, firstPrinciples: 10 * time.Second, cordoned: []time.Duration{fl}},
			"floor-2q":  {cordonP99: f2, drainedP99: time.Second, cordonOnly: true, cordoned: []time.Duration{f2}},
		}
	}
	rounds := []map[string]*result{round(400*ms, 200*ms, 320*ms), round(300*ms, 150*ms, 200*ms), round(500*ms, 250*ms, 250*ms)}
	rr, _ := ratiosOf(rounds[0])
	if rr.cordonRef != 200*ms || math.Abs(rr.cordon-2) > 1e-9 || rr.bestName != "floor" {
		t.Errorf("floor-2q changed the floor's ratios: cordon %v to %v, best %s; want 2 to 200ms, floor", rr.cordon, rr.cordonRef, rr.bestName)
	}
	if rr.cordon2qRef != 320*ms || math.Abs(rr.cordon2q-1.25) > 1e-9 {
		t.Errorf("cordon 2q %v to %v, want 1.25 to 320ms", rr.cordon2q, rr.cordon2qRef)
	}
	line, _ := roundsLine(rounds, [][]string{{"drainpipe"}, {"drainpipe"}, {"drainpipe"}})
	for _, want := range []string{"floor2q_cordon_p99s=0.32,0.20,0.25 ", "ratio_cordon_2qs=1.25,1.50,2.00", "ratio_cordon_2q_median=1.50"} {
		if !strings.Contains(line, want) {
			t.Errorf("rounds line lacks %q:\n%s", want, line)
		}
	}
	last, _ := lastLine(rounds)
	for _, want := range []string{"floor2q_cordon_p99=0.25 ", "ratio_cordon_2q=1.50"} {
		if !strings.Contains(last+" ", want) {
			t.Errorf("last line lacks %q:\n%s", want, last)
		}
	}
}
