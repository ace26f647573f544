package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// lastLine is the benchmark's verdict; false unless drainpipe and floor
// both ran (without the NTH-style peer, as in a 500-node wave, its
// fields read "-"). The floor is clamped to the fastest run measured.
func lastLine(res map[string]*result) (string, bool) {
	dp, nt, fl := res["drainpipe"], res["nth"], res["floor"]
	if dp == nil || fl == nil {
		return "", false
	}
	nthDrained, ratioNTH := "-", "-"
	if nt != nil {
		nthDrained, ratioNTH = nt.drainedString(), fmt.Sprintf("%.1f", ratio(nt.drainedP99, dp.drainedP99))
	}
	floorCordon, floorDrained := floors(res)
	nofc := res["drainpipe-nofc"]
	if nofc == nil {
		nofc = &result{apf: -1, neighbour: neighbourResult{rejected: -1}}
	}
	return fmt.Sprintf("bench wave%d: cordon_p99=%.2f drained_p99=%.2f nth_drained_p99=%s floor_cordon_p99=%.2f floor_drained_p99=%.2f fp_drained_p99=%.2f "+
		"ratio_nth=%s ratio_limit=%.2f ratio_cordon=%.2f apf_rejected=%d apf_rejected_nofc=%d "+
		"neighbour_p99=%.3f neighbour_p99_nofc=%.3f neighbour_rejected=%d neighbour_rejected_nofc=%d "+
		"cost_gbs_per_node=%.3f kube_per_node=%.1f aws_per_node=%.2f dlq=%d hooks_open=%d lost_pods=%d floor_lost_pods=%d cordon_seen_p99=%.2f floor_cordon_seen_p99=%.2f",
		dp.targets, secs(dp.cordonP99), secs(dp.drainedP99), nthDrained, secs(floorCordon), secs(floorDrained), secs(fl.firstPrinciples),
		ratioNTH, ratio(dp.drainedP99, floorDrained), ratio(dp.cordonP99, floorCordon),
		dp.apf, nofc.apf, secs(dp.neighbour.p99), secs(nofc.neighbour.p99), dp.neighbour.rejected, nofc.neighbour.rejected,
		dp.cost.gbSeconds/float64(max(1, dp.targets)), dp.cost.per(dp.cost.kube), dp.cost.per(dp.cost.ec2+dp.cost.asg),
		dp.dlq, dp.hooks.Open, dp.lost, fl.lost, secs(dp.cordonSeenP99), secs(fl.cordonSeenP99)), true
}

// floors is the bound of the runs in res: the floor's cordon and drained
// p99, each clamped to the fastest run that drained every node (and lost
// no pod, for the drain). res must hold a floor run.
func floors(res map[string]*result) (cordon, drained time.Duration) {
	fl := res["floor"]
	cordon, drained = fl.cordonP99, fl.drainedP99
	for _, r := range res {
		if r.cordonP99 > 0 && r.undrained == 0 {
			cordon = min(cordon, r.cordonP99)
		}
		if r != fl && r.drainedP99 > 0 && r.undrained == 0 && r.lost == 0 {
			drained = min(drained, r.drainedP99)
		}
	}
	return cordon, drained
}

func secs(d time.Duration) float64 { return d.Seconds() }

func ratio(a, b time.Duration) float64 {
	if b <= 0 {
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
		{"limit", "#7f7f7f"},
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
