package main

import (
	"strings"
	"testing"
	"time"
)

func TestRoundsLinePairsEachRoundsRuns(t *testing.T) {
	ms := time.Millisecond
	round := func(dp, fl time.Duration) map[string]*result {
		return map[string]*result{
			"drainpipe": {cordonP99: dp, drainedP99: 50 * time.Second},
			"floor":     {cordonP99: fl, drainedP99: 40 * time.Second},
		}
	}
	rounds := []map[string]*result{round(430*ms, 310*ms), round(300*ms, 310*ms), round(540*ms, 160*ms)}
	line, ok := roundsLine(rounds)
	if !ok {
		t.Fatal("no rounds line for three rounds")
	}
	for _, want := range []string{"bench rounds=3:", "cordon_p99s=0.43,0.30,0.54 ", "floor_cordon_p99s=0.31,0.30,0.16 ", "ratio_cordons=1.39,1.00,3.38 ",
		"median_ratio_cordon=1.39 ", "median_ratio_limit=1.25"} {
		if !strings.Contains(line, want) {
			t.Errorf("rounds line lacks %q:\n%s", want, line)
		}
	}
	if _, ok := roundsLine(rounds[:1]); ok {
		t.Error("a rounds line for one round")
	}
	if m := median([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Errorf("median of 1..4 = %v, want 2.5", m)
	}
}
