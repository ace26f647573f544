package metrics

import "github.com/drainpipe/drainpipe/internal/sweep"

// Sweep metrics: one document per sweep, without dimensions. SweepRepairs
// is the sum of the three repairs; the stack's alarm fires when it is
// above zero, since every repair means a notice was lost.
const (
	MetricSweepNodesChecked    = "SweepNodesChecked"
	MetricSweepGivenBack       = "SweepGivenBack"
	MetricSweepOutOfService    = "SweepOutOfService"
	MetricSweepScheduledEvents = "SweepScheduledEvents"
	MetricSweepRepairs         = "SweepRepairs"
)

// RecordSweep emits one sweep's counts. A dry run's would-be repairs are
// not counted: nothing was repaired.
func (e *Emitter) RecordSweep(r sweep.Report) {
	if r.DryRun {
		return
	}
	given, oos, sched := r.Count(sweep.RepairGivenBack), r.Count(sweep.RepairOutOfService), r.Count(sweep.RepairScheduled)
	e.Emit(Doc{Dimensions: [][]string{{}}, Metrics: []Metric{
		{MetricSweepNodesChecked, Count, float64(r.Checked)},
		{MetricSweepGivenBack, Count, float64(given)},
		{MetricSweepOutOfService, Count, float64(oos)},
		{MetricSweepScheduledEvents, Count, float64(sched)},
		{MetricSweepRepairs, Count, float64(given + oos + sched)},
	}})
}
