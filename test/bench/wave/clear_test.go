package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Two lower bounds combine rank by rank into their larger one; a node one
// of them never drains stays never.
func TestRankMax(t *testing.T) {
	s := time.Second
	got := rankMax([]time.Duration{3 * s, 0, 1 * s}, []time.Duration{5 * s, 2 * s, 2 * s})
	want := []time.Duration{2 * s, 3 * s, 0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rankMax (-want +got):\n%s", diff)
	}
}
