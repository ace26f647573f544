package metrics

// Published is one metric the function writes: its name, unit and the
// dimension sets it is published under, besides DimStack, which
// Emitter.WithStack adds to every set. An empty set is the aggregate.
type Published struct {
	Name       string
	Unit       Unit
	Dimensions [][]string
}

// Catalog lists every metric the package writes, so dashboards and
// exporter configurations kept outside the function (deploy/) can be
// checked against what CloudWatch will actually hold: CloudWatch does not
// aggregate across dimensions, so a query on a set never published is
// empty, not an error.
func Catalog() []Published {
	record := [][]string{{DimKind, DimOutcome}, {DimOutcome}, {}}
	drain := [][]string{{DimCluster, DimKind}, {}}
	sweep := [][]string{{}}
	return []Published{
		{MetricRecords, Count, record},
		{MetricRecordDuration, Milliseconds, record},
		{MetricQueueLatency, Milliseconds, record},
		{MetricDrainDuration, Milliseconds, drain},
		{MetricPodsEvicted, Count, drain},
		{MetricPodsBlocked, Count, drain},
		{MetricPodsTerminating, Count, drain},
		{MetricDrainsUnfinished, Count, drain},
		{MetricDeadlineHit, Count, drain},
		{MetricDrainBlockedFor, Seconds, drain},
		{MetricReportsLost, Count, drain},
		{MetricHookCompletions, Count, [][]string{{DimOutcome}}},
		{MetricHookHeartbeats, Count, [][]string{{DimOutcome}}},
		{MetricErrors, Count, [][]string{{DimClass}}},
		{MetricSweepNodesChecked, Count, sweep},
		{MetricSweepGivenBack, Count, sweep},
		{MetricSweepOutOfService, Count, sweep},
		{MetricSweepScheduledEvents, Count, sweep},
		{MetricSweepRepairs, Count, sweep},
	}
}
