package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/drainpipe/drainpipe/test/fleet"
)

// lastLine is the benchmark's verdict over every round; false unless
// drainpipe ran. One statistic throughout: each time and each ratio is the
// median of the rounds' own figures (a round's p99, a round's ratio); the
// percentiles of every node of every round together are the pooled lines'.
// Counts are the sum over the rounds, costs per node over the rounds. A
// reference that did not run reads "-"; a run of -nofc that did not, -1.
func lastLine(rounds []map[string]*result) (string, bool) {
	dp, ok := pool(rounds, "drainpipe")
	if !ok {
		return "", false
	}
	fl, _ := pool(rounds, "floor")
	pc, _ := pool(rounds, "paced")
	nofc, ranNoFC := pool(rounds, "drainpipe-nofc")
	if !ranNoFC {
		nofc.apf, nofc.neighbourRejected = -1, -1
	}
	rs := roundsRatios(rounds)
	p99 := func(peer string, of func(*result) []time.Duration) string { return medianP99(rounds, peer, of) }
	cordoned := func(r *result) []time.Duration { return r.cordoned }
	drained := func(r *result) []time.Duration { return r.drained }
	seen := func(r *result) []time.Duration { return r.seen }
	spot := func(r *result) []time.Duration { return r.outcome.spotGraceful }
	hook := func(r *result) []time.Duration { return r.outcome.hookDrained }
	return fmt.Sprintf("bench wave%d: rounds=%d cordon_p99=%s drained_p99=%s nth_drained_p99=%s floor_cordon_p99=%s floor_drained_p99=%s "+
		"paced_drained_p99=%s best_drained_p99=%s fp_drained_p99=%s "+
		"ratio_nth=%s ratio_cordon=%s ratio_best_strategy=%s ratio_lower_bound=%s apf_rejected=%d apf_rejected_nofc=%d "+
		"neighbour_p99=%s neighbour_p99_nofc=%s neighbour_rejected=%d neighbour_rejected_nofc=%d "+
		"cost_gbs_per_node=%.3f kube_per_node=%.1f aws_per_node=%.2f sqs_per_node=%.2f dlq=%d hooks_open=%d "+
		"lost_pods=%d floor_lost_pods=%d spot_lost_pods=%d paced_spot_lost_pods=%d spot_deleted_pods=%d paced_spot_deleted_pods=%d hook_deleted_pods=%d "+
		"budget_violations=%d paced_budget_violations=%d "+
		"spot_graceful_p99=%s paced_spot_graceful_p99=%s hook_drained_p99=%s paced_hook_drained_p99=%s "+
		"cordon_seen_p99=%s floor_cordon_seen_p99=%s floor2q_cordon_p99=%s ratio_cordon_2q=%s",
		dp.targets, dp.runs, p99("drainpipe", cordoned), p99("drainpipe", drained), p99("nth", drained), p99("floor", cordoned), p99("floor", drained),
		p99("paced", drained), spreadOf(rs.best), spreadOf(rs.lowerBound),
		spreadOf(rs.nth), spreadOf(rs.cordon), spreadOf(rs.bestRatio), spreadOf(rs.lowerRatio), dp.apf, nofc.apf,
		medianNeighbour(rounds, "drainpipe"), medianNeighbour(rounds, "drainpipe-nofc"), dp.neighbourRejected, nofc.neighbourRejected,
		dp.cost.gbSeconds/float64(max(1, dp.cost.nodes)), dp.cost.per(dp.cost.kube), dp.cost.per(dp.cost.ec2+dp.cost.asg), dp.cost.per(dp.cost.sqs),
		dp.dlq, dp.hooksOpen,
		dp.lost, fl.lost, dp.outcome.spotLost, pc.outcome.spotLost, dp.outcome.spotDeleted, pc.outcome.spotDeleted, dp.outcome.hookDeleted,
		dp.outcome.spotDeleted+dp.outcome.hookDeleted, pc.outcome.spotDeleted+pc.outcome.hookDeleted,
		p99("drainpipe", spot), p99("paced", spot), p99("drainpipe", hook), p99("paced", hook),
		p99("drainpipe", seen), p99("floor", seen), p99("floor-2q", cordoned), spreadOf(rs.cordon2q)), true
}

// medianP99 is the median over the rounds peer ran of each round's p99 of
// of(its result), in seconds ("inf" when it falls on a node never
// reached, "-" when no round has such nodes).
func medianP99(rounds []map[string]*result, peer string, of func(*result) []time.Duration) string {
	var v []time.Duration
	for _, res := range rounds {
		if r := res[peer]; r != nil && len(of(r)) > 0 {
			v = append(v, fleet.Percentile(of(r), 99))
		}
	}
	if len(v) == 0 {
		return "-"
	}
	return secsString(medianDuration(v))
}

// medianNeighbour is the median of the rounds' neighbour p99s, to the
// millisecond; "-" when peer never ran.
func medianNeighbour(rounds []map[string]*result, peer string) string {
	var v []time.Duration
	for _, res := range rounds {
		if r := res[peer]; r != nil && len(r.neighbour.lat) > 0 {
			v = append(v, percentile(r.neighbour.lat, 99))
		}
	}
	if len(v) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", medianDuration(v).Seconds())
}

// medianDuration is the middle value, or the mean of the middle two
// (never when either is).
func medianDuration(v []time.Duration) time.Duration {
	s := slices.Sorted(slices.Values(v))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	if s[n/2] == never {
		return never
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// pooled is one peer's runs over every round, node by node.
type pooled struct {
	runs, targets                     int
	cordoned, seen, drained           []time.Duration
	neighbour                         []time.Duration
	outcome                           outcome
	cost                              cost
	apf, neighbourRejected, dlq, lost int
	hooksOpen, reclaimed              int
}

// pool gathers peer's runs; false if it never ran.
func pool(rounds []map[string]*result, peer string) (pooled, bool) {
	var p pooled
	for _, res := range rounds {
		r := res[peer]
		if r == nil {
			continue
		}
		p.runs++
		p.targets = r.targets
		p.cordoned = append(p.cordoned, r.cordoned...)
		p.seen = append(p.seen, r.seen...)
		p.drained = append(p.drained, r.drained...)
		p.neighbour = append(p.neighbour, r.neighbour.lat...)
		p.outcome = p.outcome.add(r.outcome)
		p.cost = p.cost.add(r.cost)
		p.apf += r.apf
		p.neighbourRejected += r.neighbour.rejected
		p.dlq += r.dlq
		p.lost += r.lost
		p.hooksOpen += r.hooks.Open
		p.reclaimed += r.reclaimed
	}
	return p, p.runs > 0
}

// pooledLine is a peer's outcomes over every round, per deadline class.
func pooledLine(peer string, p pooled) string {
	o := p.outcome
	return fmt.Sprintf("bench pooled %s: runs=%d nodes=%d cordon_p50/p90/p99=%s/%s/%s drained_p50/p90/p99=%s/%s/%s "+
		"spot_nodes=%d spot_graceful_p50/p90/p99=%s/%s/%s spot_reclaimed_nodes=%d spot_lost_pods=%d spot_deleted_pods=%d "+
		"hook_nodes=%d hook_drained_p50/p90/p99=%s/%s/%s hook_lost_pods=%d hook_deleted_pods=%d neighbour_p99=%s",
		peer, p.runs, len(p.drained), pct(p.cordoned, 50), pct(p.cordoned, 90), pct(p.cordoned, 99),
		pct(p.drained, 50), pct(p.drained, 90), pct(p.drained, 99),
		o.spotNodes, pct(o.spotGraceful, 50), pct(o.spotGraceful, 90), pct(o.spotGraceful, 99), o.spotReclaimed, o.spotLost, o.spotDeleted,
		o.hookedNodes, pct(o.hookDrained, 50), pct(o.hookDrained, 90), pct(o.hookDrained, 99), o.hookLost, o.hookDeleted, pct3(p.neighbour))
}

// pct3 is a p99 of latencies in milliseconds' precision; "-" for none.
func pct3(ds []time.Duration) string {
	if len(ds) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", percentile(ds, 99).Seconds())
}

func secs(d time.Duration) float64 { return d.Seconds() }

// ratio is a/b; 0 when b is no reference (zero, or never reached).
func ratio(a, b time.Duration) float64 {
	if b <= 0 || b == never {
		return 0
	}
	return a.Seconds() / b.Seconds()
}

// chart writes the SVG of the runs that ran, in a fixed order.
func chart(o options, res map[string]*result) error {
	if o.chart == "" {
		return nil
	}
	colors := []struct{ peer, color string }{
		{"drainpipe", "#1f77b4"}, {"drainpipe-nofc", "#9467bd"}, {"nth", "#d62728"}, {"floor", "#2ca02c"}, {"floor-inproc", "#bcbd22"},
		{"paced", "#ff7f0e"}, {"limit", "#7f7f7f"},
	}
	var all []series
	var n int
	for _, c := range colors {
		if r := res[c.peer]; r != nil {
			all = append(all, series{name: c.peer, color: c.color, cordoned: r.cordoned, drained: r.drained, nodes: r.targets})
			n = r.targets
		}
	}
	if err := os.MkdirAll(filepath.Dir(o.chart), 0o755); err != nil {
		return fmt.Errorf("writing the chart: %w", err)
	}
	f, err := os.Create(o.chart)
	if err != nil {
		return fmt.Errorf("writing the chart: %w", err)
	}
	title := fmt.Sprintf("Spot wave: %d of %d nodes interrupted, share cordoned and drained over time", n, o.nodes)
	if err := writeChart(f, title, all); err != nil {
		_ = f.Close()
		return fmt.Errorf("writing the chart: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing the chart: %w", err)
	}
	fmt.Println("chart:", o.chart)
	return nil
}
