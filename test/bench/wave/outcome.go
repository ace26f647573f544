package main

import (
	"time"

	"github.com/drainpipe/drainpipe/test/fleet"
)

// outcome is one run's result per deadline class: Spot nodes (EC2 takes
// them back two minutes after the warning) and hook nodes (their
// lifecycle action waits for the drain).
//
// A Spot node is drained gracefully when the watch saw it cordoned and
// without evictable pods before EC2 reclaimed it, and no pod of it was
// deleted past its disruption budget. Any other Spot node (reclaimed with
// pods on it, never cordoned, or emptied by deletes that skipped a
// budget) has no graceful time: it counts as never drained, so a share
// of such nodes above 1% makes the graceful p99 infinite. It is
// penalised, not left out: leaving it out would reward losing a node.
// Its pods are counted apart: lost (still on it when reclaimed) and
// deleted (deleted past a budget, by whoever drained).
type outcome struct {
	spotGraceful           []time.Duration // per Spot node; zero: never
	spotLost, spotDeleted  int             // pods
	spotReclaimed          int             // Spot nodes reclaimed before drained
	hookDrained            []time.Duration // per hook node; zero: never
	hookLost, hookDeleted  int             // pods
	spotNodes, hookedNodes int
}

// classify sorts the targets' times into their classes; deleted counts,
// per node, the pods deleted past a budget (deletedPastBudget).
func classify(targets []fleet.Node, times map[string]fleet.Times, deleted map[string]int) outcome {
	var o outcome
	for _, n := range targets {
		t := times[n.Name]
		undrained := t.Reclaimed != 0 && (t.Drained == 0 || t.Drained >= t.Reclaimed)
		lost := 0
		if undrained {
			lost = t.Lost
		}
		if n.Spot {
			o.spotNodes++
			o.spotLost += lost
			o.spotDeleted += deleted[n.Name]
			graceful := t.Drained
			if undrained || deleted[n.Name] > 0 || t.Cordoned == 0 {
				graceful = 0
			}
			if undrained {
				o.spotReclaimed++
			}
			o.spotGraceful = append(o.spotGraceful, graceful)
			continue
		}
		o.hookedNodes++
		o.hookLost += lost
		o.hookDeleted += deleted[n.Name]
		drained := t.Drained
		if undrained {
			drained = 0
		}
		o.hookDrained = append(o.hookDrained, drained)
	}
	return o
}

// add pools another round's outcome into o.
func (o outcome) add(p outcome) outcome {
	o.spotGraceful = append(o.spotGraceful, p.spotGraceful...)
	o.hookDrained = append(o.hookDrained, p.hookDrained...)
	o.spotLost += p.spotLost
	o.spotDeleted += p.spotDeleted
	o.spotReclaimed += p.spotReclaimed
	o.hookLost += p.hookLost
	o.hookDeleted += p.hookDeleted
	o.spotNodes += p.spotNodes
	o.hookedNodes += p.hookedNodes
	return o
}
