package main

import (
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/fleet"
)

func TestClassifyCountsAReclaimedSpotNodeAsNeverDrained(t *testing.T) {
	s := time.Second
	nodes := []fleet.Node{
		{Name: "spot-ok", Spot: true},
		{Name: "spot-reclaimed", Spot: true},
		{Name: "spot-deleted", Spot: true},
		{Name: "spot-drained-then-reclaimed", Spot: true},
		{Name: "hook-ok", Hook: &awsfake.LifecycleAction{}},
		{Name: "hook-never", Hook: &awsfake.LifecycleAction{}},
	}
	times := map[string]fleet.Times{
		"spot-ok": {Cordoned: s, Drained: 30 * s},
		// The observer marks a node reclaimed undrained as drained then.
		"spot-reclaimed":              {Cordoned: s, Drained: 120 * s, Reclaimed: 120 * s, Lost: 7},
		"spot-deleted":                {Cordoned: s, Drained: 110 * s},
		"spot-drained-then-reclaimed": {Cordoned: s, Drained: 100 * s, Reclaimed: 120 * s},
		"hook-ok":                     {Cordoned: s, Drained: 40 * s},
	}
	o := classify(nodes, times, map[string]int{"spot-deleted": 2})
	want := []time.Duration{30 * s, 0, 0, 100 * s}
	for i, g := range o.spotGraceful {
		if g != want[i] {
			t.Errorf("%s: graceful %v, want %v (zero: never)", nodes[i].Name, g, want[i])
		}
	}
	if o.spotLost != 7 || o.spotDeleted != 2 || o.spotReclaimed != 1 || o.spotNodes != 4 {
		t.Errorf("spot: lost %d deleted %d reclaimed %d nodes %d, want 7 2 1 4", o.spotLost, o.spotDeleted, o.spotReclaimed, o.spotNodes)
	}
	if len(o.hookDrained) != 2 || o.hookDrained[0] != 40*s || o.hookDrained[1] != 0 || o.hookedNodes != 2 {
		t.Errorf("hook drained %v over %d nodes, want [40s 0] over 2", o.hookDrained, o.hookedNodes)
	}
	// One never-drained node of four is above 1%: the p99 is never.
	if p := fleet.Percentile(o.spotGraceful, 99); p != never {
		t.Errorf("graceful p99 %v, want never", p)
	}
	pooled := o.add(o)
	if len(pooled.spotGraceful) != 8 || pooled.spotLost != 14 || pooled.hookedNodes != 4 {
		t.Errorf("pooled %+v", pooled)
	}
}

// The drained times behind drained_p99 and both drain ratios: a node EC2
// took back with its pods is never drained (the observer marks it drained
// at that moment), nor is one emptied by deleting pods past their budget;
// both are counted apart.
func TestPerNodeNeverDrainsAReclaimedOrViolatedNode(t *testing.T) {
	s := time.Second
	times := map[string]fleet.Times{
		"ok":        {Cordoned: s, Drained: 30 * s},
		"reclaimed": {Cordoned: s, Drained: 120 * s, Reclaimed: 120 * s, Lost: 7},
		"deleted":   {Cordoned: s, Drained: 110 * s},
		"late":      {Cordoned: s, Drained: 100 * s, Reclaimed: 120 * s},
		"open":      {Cordoned: s},
	}
	n := perNode(times, map[string]time.Duration{"ok": s / 2}, map[string]int{"deleted": 3})
	var drained time.Duration
	for _, d := range n.drained {
		if d > drained {
			drained = d
		}
	}
	if drained != 100*s {
		t.Errorf("latest drained time %v, want 100s (the reclaimed and the violated nodes never drained)", drained)
	}
	if n.undrained != 3 || n.reclaimed != 1 || n.lost != 7 || n.violations != 3 {
		t.Errorf("undrained %d reclaimed %d lost %d violations %d, want 3 1 7 3", n.undrained, n.reclaimed, n.lost, n.violations)
	}
}
