package main

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestRoundOrderAlternates(t *testing.T) {
	peers := []string{"paced", "drainpipe", "floor"}
	if got := roundOrder(peers, 0); !slices.Equal(got, peers) {
		t.Errorf("round 1: %v", got)
	}
	if got := roundOrder(peers, 1); !slices.Equal(got, []string{"floor", "drainpipe", "paced"}) {
		t.Errorf("round 2: %v", got)
	}
	if got := roundOrder(peers, 2); !slices.Equal(got, peers) {
		t.Errorf("round 3: %v", got)
	}
	if peers[0] != "paced" {
		t.Error("roundOrder changed its argument")
	}
}

func TestSpreadAndPercentiles(t *testing.T) {
	s := spreadOf([]float64{0.72, 1.4, 1.1})
	if s.med != 1.1 || s.lo != 0.72 || s.hi != 1.4 || s.String() != "1.10" {
		t.Errorf("spread %+v %s", s, s)
	}
	if spreadOf(nil).String() != "-" {
		t.Error("no rounds should print -")
	}
	if m := median([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Errorf("median of 1..4 = %v, want 2.5", m)
	}
	sec := time.Second
	if got := pct([]time.Duration{sec, 2 * sec, 0}, 99); got != "inf" {
		t.Errorf("p99 with a node never reached: %s, want inf", got)
	}
	if _, err := strconv.ParseFloat(pct([]time.Duration{0}, 99), 64); err != nil {
		t.Errorf("inf must parse: %v", err)
	}
	if got := pct(nil, 99); got != "-" {
		t.Errorf("no nodes: %s", got)
	}
	if got := pct([]time.Duration{sec, 3 * sec}, 50); got != "1.00" {
		t.Errorf("p50: %s", got)
	}
}

// A peer whose median node was never drained prints its drained p50 as
// "inf", as every other percentile, not as the largest duration in seconds.
func TestSummaryDrainedMedianNeverReached(t *testing.T) {
	r := &result{targets: 2, drainedP50: never, drainedP99: never, undrained: 2, bound: time.Minute}
	s := r.summary("drainpipe")
	if !strings.Contains(s, "drained p50 inf p99 >60 ") {
		t.Errorf("summary %q: want drained p50 inf and p99 past the bound", s)
	}
}
