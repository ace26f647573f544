package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestDrainCycles(t *testing.T) {
	tests := []struct {
		name    string
		nodes   int
		budgets []budgetLoad
		want    []int
	}{
		{"no budgets: every node in cycle 0", 3, nil, []int{0, 0, 0}},
		{
			// 5 pods, 2 at a time: gone after cycles 0, 1, 2. After cycle
			// 0, 3 are left, on at least 1 node (a holds 3); after cycle 1,
			// 1 is left, on 1 node.
			"one budget", 3,
			[]budgetLoad{{Allowed: 2, OnNode: map[string]int{"a": 3, "b": 1, "c": 1}}},
			[]int{0, 0, 2},
		},
		{
			// Two budgets: one of each holds a node through cycle 0.
			"slowest budget bounds", 4,
			[]budgetLoad{
				{Allowed: 1, OnNode: map[string]int{"a": 1, "b": 1}},
				{Allowed: 4, OnNode: map[string]int{"a": 2, "c": 2, "d": 1}},
			},
			[]int{0, 0, 0, 1},
		},
		{
			"a budget allowing nothing holds its nodes forever", 3,
			[]budgetLoad{{Allowed: 0, OnNode: map[string]int{"a": 1}}},
			[]int{0, 0, -1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, drainCycles(tt.nodes, tt.budgets)); diff != "" {
				t.Errorf("drainCycles (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFloorTimes(t *testing.T) {
	s := time.Second
	// Cordoned at 1, 2, never, 3 s (unsorted); cycles 0, 0, 3, 1 for the
	// ranks; a cycle of 4 s from the first cordon at 1 s.
	starts := cycleStarts(3, nil, 4*s, 0)
	got := floorTimes([]time.Duration{2 * s, 1 * s, 0, 3 * s}, []int{0, 0, 3, 1}, starts)
	want := []time.Duration{1 * s, 2 * s, 13 * s, 0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("floorTimes (-want +got):\n%s", diff)
	}
}

func TestCycleStartsCountReplacementsAtTheMeasuredRate(t *testing.T) {
	s := time.Second
	// Budget x lets 2 go at a time and has 5 to go (cycles 0, 1, 2); y
	// lets 10 go and has 4 (cycle 0 only). Before cycle 1, x waits for 2
	// replacements; before cycle 2, for 4. y needs none.
	budgets := []budgetLoad{
		{Allowed: 2, OnNode: map[string]int{"a": 3, "b": 2}},
		{Allowed: 10, OnNode: map[string]int{"a": 4}},
	}
	if got := []int{replacementsBefore(0, budgets), replacementsBefore(1, budgets), replacementsBefore(2, budgets), replacementsBefore(3, budgets)}; !cmp.Equal(got, []int{0, 2, 4, 0}) {
		t.Errorf("replacementsBefore = %v, want [0 2 4 0]", got)
	}
	// At 1 replacement a second the throughput, not the 0.5 s cycle,
	// bounds cycles 1 and 2.
	want := []time.Duration{0, 2 * s, 4 * s}
	if diff := cmp.Diff(want, cycleStarts(2, budgets, s/2, 1)); diff != "" {
		t.Errorf("cycleStarts (-want +got):\n%s", diff)
	}
}
