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
	got := floorTimes([]time.Duration{2 * s, 1 * s, 0, 3 * s}, []int{0, 0, 3, 1}, 4*s)
	want := []time.Duration{1 * s, 2 * s, 13 * s, 0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("floorTimes (-want +got):\n%s", diff)
	}
}
