package metrics

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/drainpipe/drainpipe/internal/awserr"
	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/pipeline"
)

// Metric names. The CDK dashboard and alarms refer to them.
const (
	MetricRecords          = "Records"          // per SQS record; dims kind+outcome, outcome, none
	MetricQueueLatency     = "QueueLatency"     // event time (or SQS send) to handling
	MetricRecordDuration   = "RecordDuration"   // handling time of one record
	MetricDrainDuration    = "DrainDuration"    // one drain run of a node
	MetricPodsEvicted      = "PodsEvicted"      // evictions this run had accepted
	MetricPodsBlocked      = "PodsBlocked"      // pods a disruption budget still refused at the end
	MetricPodsTerminating  = "PodsTerminating"  // evicted pods not gone when the run stopped
	MetricDrainsUnfinished = "DrainsUnfinished" // runs that stopped before the node was empty
	MetricDeadlineHit      = "DeadlineHit"      // runs the instance's deadline cut short
	MetricDrainBlockedFor  = "DrainBlockedFor"  // seconds a still-blocked drain has been refused by a budget, over its runs
	MetricReportsLost      = "DrainReportsLost" // drain reports not written on the node (twice failed in the time left)
	MetricHookCompletions  = "HookCompletions"  // CompleteLifecycleAction calls; dim outcome
	MetricHookHeartbeats   = "HookHeartbeats"   // RecordLifecycleActionHeartbeat calls; dim outcome
	MetricErrors           = "Errors"           // dim class
)

// Dimension keys.
const (
	DimKind    = "kind"
	DimCluster = "cluster"
	DimOutcome = "outcome"
	DimClass   = "class"
	// DimStack names the deployment (DRAINPIPE_METRICS_STACK), on every
	// metric when set: see Emitter.WithStack.
	DimStack = "stack"
)

// Hook call outcomes.
const (
	HookOK          = "ok"
	HookAlreadyDone = "already-done"
	HookError       = "error"
)

// Error classes besides the AWS ones (see errorClass).
const (
	ClassKubeEvent = "kube-event"
	ClassWebhook   = "webhook"
)

var _ pipeline.Recorder = (*Emitter)(nil)

// Record emits one document per SQS record. Its signature fits
// handler.Options.OnRecord.
func (e *Emitter) Record(_ context.Context, s handler.RecordSummary) {
	kinds := make([]string, len(s.Kinds))
	for i, k := range s.Kinds {
		kinds[i] = string(k)
	}
	kind := strings.Join(kinds, ",")
	if kind == "" {
		kind = "none"
	}
	props := map[string]string{DimKind: kind, DimOutcome: s.Outcome, "message_id": s.MessageID}
	if len(s.Instances) > 0 {
		props["instance_id"] = strings.Join(s.Instances, ",")
	}
	if len(s.EventIDs) > 0 {
		props["event_id"] = strings.Join(s.EventIDs, ",")
	}
	metrics := []Metric{
		{MetricRecords, Count, 1},
		{MetricRecordDuration, Milliseconds, ms(s.Duration)},
	}
	if l := s.QueueLatency(); l > 0 {
		metrics = append(metrics, Metric{MetricQueueLatency, Milliseconds, ms(l)})
	}
	e.Emit(Doc{Dimensions: [][]string{{DimKind, DimOutcome}, {DimOutcome}, {}}, Props: props, Metrics: metrics})
}

// drainRun is a drain report waiting for its task's result.
type drainRun struct {
	cluster string
	report  drain.Report
}

// RecordDrain keeps the report until RecordTask, which the pipeline calls
// next for the same task, knows its kind and deadline.
func (e *Emitter) RecordDrain(cluster string, r drain.Report) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.pending[r.Node] = drainRun{cluster: cluster, report: r}
}

// RecordTask emits one document per node drained (or cordoned): duration,
// pods evicted, blocked and still terminating, and whether the instance's
// deadline cut it short. Tasks that never reached a drain emit nothing:
// their records are counted by Record.
func (e *Emitter) RecordTask(t handler.Task, r handler.Result, _ time.Duration) {
	e.mu.Lock()
	run, ok := e.pending[r.Node]
	delete(e.pending, r.Node)
	now := e.now()
	e.mu.Unlock()
	if !ok || r.Node == "" {
		return
	}
	p := primary(t)
	rep := run.report
	props := map[string]string{
		DimCluster: run.cluster, DimKind: string(p.Kind), DimOutcome: r.Status.String(),
		"node": r.Node, "instance_id": t.InstanceID, "event_id": p.EventID,
	}
	if !p.Deadline.IsZero() {
		props["deadline"] = p.Deadline.UTC().Format(time.RFC3339)
	}
	deadlineHit := !rep.Done && !p.Deadline.IsZero() && !now.Before(p.Deadline)
	metrics := []Metric{
		{MetricDrainDuration, Milliseconds, ms(rep.Elapsed)},
		{MetricPodsEvicted, Count, float64(len(rep.Evicted))},
		{MetricPodsBlocked, Count, float64(len(rep.BlockedByPDB))},
		{MetricPodsTerminating, Count, float64(len(rep.Terminating))},
		{MetricDrainsUnfinished, Count, oneIf(!rep.Done)},
		{MetricDeadlineHit, Count, oneIf(deadlineHit)},
		{MetricReportsLost, Count, oneIf(rep.ReportLost)},
	}
	// How long the drain has been blocked, over all its runs: one value
	// per run is enough for an alarm on its Maximum, however long a run.
	if len(rep.BlockedByPDB) > 0 && !rep.BlockedSince.IsZero() && now.After(rep.BlockedSince) {
		metrics = append(metrics, Metric{MetricDrainBlockedFor, Seconds, now.Sub(rep.BlockedSince).Round(time.Millisecond).Seconds()})
	}
	e.Emit(Doc{Time: now, Dimensions: [][]string{{DimCluster, DimKind}, {}}, Props: props, Metrics: metrics})
}

// RecordHook counts lifecycle hook calls by outcome, and failures by class.
func (e *Emitter) RecordHook(op pipeline.HookOp, l event.Lifecycle, alreadyDone bool, err error) {
	name := MetricHookHeartbeats
	if op == pipeline.HookComplete {
		name = MetricHookCompletions
	}
	outcome := HookOK
	if alreadyDone && op == pipeline.HookComplete {
		outcome = HookAlreadyDone
	}
	if err != nil {
		outcome = HookError
	}
	e.Emit(Doc{Dimensions: [][]string{{DimOutcome}}, Metrics: []Metric{{name, Count, 1}},
		Props: map[string]string{DimOutcome: outcome, "asg": l.ASG, "hook": l.Hook, "instance_id": l.InstanceID}})
	if err != nil {
		e.Error(errorClass(err))
	}
}

// Error counts one failure of a class.
func (e *Emitter) Error(class string) {
	e.Emit(Doc{Dimensions: [][]string{{DimClass}}, Props: map[string]string{DimClass: class},
		Metrics: []Metric{{MetricErrors, Count, 1}}})
}

// errorClass names an AWS error's class: aws-throttled, aws-access-denied,
// aws-not-found, or aws-other.
func errorClass(err error) string {
	switch c := awserr.Class(awserr.Classify(err)); {
	case errors.Is(c, awserr.ErrThrottled):
		return "aws-throttled"
	case errors.Is(c, awserr.ErrAccessDenied):
		return "aws-access-denied"
	case errors.Is(c, awserr.ErrNotFound):
		return "aws-not-found"
	}
	return "aws-other"
}

// primary is the interruption that drives a task's drain: the earliest
// deadline, else the first (as the pipeline picks it).
func primary(t handler.Task) event.Interruption {
	var p event.Interruption
	for i, in := range t.Interruptions {
		if i == 0 || (!in.Deadline.IsZero() && (p.Deadline.IsZero() || in.Deadline.Before(p.Deadline))) {
			p = in
		}
	}
	return p
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func oneIf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
