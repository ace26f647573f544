package main

import (
	"fmt"
	"time"

	"github.com/drainpipe/drainpipe/test/fleet"
)

// result is one run's measurements.
type result struct {
	targets               int
	cordonP99, drainedP99 time.Duration
	cordonSeenP99         time.Duration // the cordons as the observer's watch saw them
	drainedP50            time.Duration
	cordoned, drained     []time.Duration // per interrupted node, zero: never
	seen                  []time.Duration // the cordons as the watch saw them, per node
	outcome               outcome         // per deadline class
	undrained             int
	reclaimed, lost       int  // nodes reclaimed at their deadline undrained; the evictable pods they held
	violated              int  // pods deleted past their budget (their nodes count as undrained)
	cordonOnly            bool // the floor without its drain (-floor-drain=false): no drained times
	bound                 time.Duration
	hooks                 fleet.Hooks
	dlq, apf              int
	apfWhy                map[string]int // APF's rejections in the run by "flow schema/reason"
	invocations, peak     int
	setup                 time.Duration
	settled               time.Duration // waited for a quiet control plane (settle)
	quiet                 float64       // the control plane's cores when the wave began
	neighbour             neighbourResult
	cost                  cost
	cycle                 time.Duration // the floor's replacement cycle
	rate                  float64       // the floor's and paced run's replacements per second
	firstPrinciples       time.Duration // the floor's first-principles drained p99
	nodeLevel             levelWait     // APF's node level (deploy/flowcontrol.yaml): its waits for a seat
	level                 levelWait     // APF's level for Drainpipe's other requests: its waits for a seat
}

func (r *result) summary(peer string) string {
	s := fmt.Sprintf("%-14s: %d nodes: cordon p99 %.2fs (seen %.2fs), drained p50 %s p99 %s (%d undrained, among them %d reclaimed with %d pods and those emptied by %d pods deleted past their budget), hooks %+v, dlq %d, apf rejected %d, invocations %d, peak environments %d (setup %.0fs, settled %.0fs at %.2f cores, load %s)",
		peer, r.targets, r.cordonP99.Seconds(), r.cordonSeenP99.Seconds(), secsString(r.drainedP50), r.drainedString(), r.undrained, r.reclaimed, r.lost, r.violated, r.hooks, r.dlq, r.apf, r.invocations, r.peak,
		r.setup.Seconds(), r.settled.Seconds(), r.quiet, loadavg())
	s += fmt.Sprintf("\n%-14s  neighbour: %d requests, p99 %.3fs, %d rejected (429), %d failed", "", r.neighbour.requests, r.neighbour.p99.Seconds(), r.neighbour.rejected, r.neighbour.failed)
	if len(r.apfWhy) > 0 {
		s += fmt.Sprintf("\n%-14s  apf rejected by schema/reason: %v", "", r.apfWhy)
	}
	s += fmt.Sprintf("\n%-14s  %s", "", r.cost)
	if r.nodeLevel.level != "" {
		s += fmt.Sprintf("\n%-14s  %s; %s", "", r.nodeLevel, r.level)
	}
	o := r.outcome
	s += fmt.Sprintf("\n%-14s  spot: %d nodes, graceful p99 %s, %d reclaimed undrained, %d pods lost, %d deleted past a budget; hook: %d nodes, drained p99 %s, %d pods deleted past a budget",
		"", o.spotNodes, pct(o.spotGraceful, 99), o.spotReclaimed, o.spotLost, o.spotDeleted, o.hookedNodes, pct(o.hookDrained, 99), o.hookDeleted)
	if r.cycle == 0 && r.rate > 0 { // the paced run's pace
		s += fmt.Sprintf("\n%-14s  pace: the replacement rate (%d pods deleted at once to all replacements Ready, quiet control plane): %.1f/s", "", rateSamplePods, r.rate)
	}
	if r.cycle > 0 {
		s += fmt.Sprintf("\n%-14s  replacement cycle (eviction to the budget granting again, fastest of %d on a quiet control plane): %.2fs", "", cycleSamples, r.cycle.Seconds())
		s += fmt.Sprintf("\n%-14s  replacement rate (%d pods deleted at once to all replacements Ready, quiet control plane): %.1f/s", "", rateSamplePods, r.rate)
		s += fmt.Sprintf("\n%-14s  first principles (those cycles at that rate, from the first cordon; not reachable here): drained p99 %.2fs", "", r.firstPrinciples.Seconds())
	}
	return s
}

// drainedString marks a p99 cut by the run's bound as a lower bound.
func (r *result) drainedString() string {
	if r.undrained > 0 && r.drainedP99 >= r.bound {
		return fmt.Sprintf(">%.0f", r.bound.Seconds())
	}
	return fmt.Sprintf("%.2f", r.drainedP99.Seconds())
}

const (
	cycleSamples   = 5
	rateSamplePods = 100
)
