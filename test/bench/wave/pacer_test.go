package main

import "testing"

func granted(w *pacerWaiter) bool {
	select {
	case <-w.granted:
		return true
	default:
		return false
	}
}

func TestPacerGrantsTheMostUrgentFirst(t *testing.T) {
	p := &pacer{burst: 2}
	hook, spot, spot2 := p.ask(5), p.ask(1), p.ask(1)
	p.tick()
	if !granted(spot) || granted(spot2) || granted(hook) {
		t.Fatal("the first grant should go to the first Spot request")
	}
	p.tick()
	if !granted(spot2) || granted(hook) {
		t.Fatal("the second grant should go to the other Spot request")
	}
	p.tick()
	if !granted(hook) {
		t.Fatal("the hook request should be granted last")
	}
	// Idle ticks bank grants up to the burst, no more.
	p.tick()
	p.tick()
	p.tick()
	a, b, c := p.ask(9), p.ask(9), p.ask(9)
	if !granted(a) || !granted(b) || granted(c) {
		t.Fatal("two banked grants should serve two requests at once, not three")
	}
	p.forget(c)
	p.tick()
	if granted(c) || p.banked != 1 {
		t.Fatal("a forgotten request should not be granted")
	}
}

// The paced reference paces only chain heads, Spot nodes' first and the
// deepest chain first within each class; a budget whose wave pods fit its
// allowance, or that allows nothing, is not paced.
func TestPacedRanksOnlyChainHeads(t *testing.T) {
	order := []string{"spot-a", "spot-b", "hook-a"}
	spot := map[string]bool{"spot-a": true, "spot-b": true}
	ref := func(name, node string) podRef { return podRef{ns: "fleet", name: name, node: node} }
	queues := map[string][]podRef{
		"deep":    {ref("d1", "spot-a"), ref("d2", "spot-b"), ref("d3", "hook-a"), ref("d4", "hook-a")}, // 4 pods, 1 at once
		"shallow": {ref("s1", "spot-b"), ref("s2", "hook-a"), ref("s3", "spot-a")},                      // 3 pods, 2 at once
		"fits":    {ref("f1", "spot-a"), ref("f2", "hook-a")},                                           // 2 pods, 5 at once
		"frozen":  {ref("z1", "spot-a")},                                                                // allows nothing
	}
	ranks := pacedRanks(queues, map[string]int{"deep": 1, "shallow": 2, "fits": 5, "frozen": 0}, order, spot)
	for _, r := range []podRef{ref("f1", "spot-a"), ref("f2", "hook-a"), ref("z1", "spot-a")} {
		if _, ok := ranks[r]; ok {
			t.Errorf("%s is paced; it heads no chain", r.name)
		}
	}
	// Spot: the deep chain's, then the shallow one's; then the hook node's.
	want := []string{"d1", "d2", "s3", "s1", "d3", "d4", "s2"}
	for i := 1; i < len(want); i++ {
		a, b := rankOf(ranks, want[i-1]), rankOf(ranks, want[i])
		if a > b {
			t.Errorf("%s (rank %d) goes after %s (rank %d)", want[i-1], a, want[i], b)
		}
	}
}

func rankOf(ranks map[podRef]int, name string) int {
	for r, n := range ranks {
		if r.name == name {
			return n
		}
	}
	return -1
}
