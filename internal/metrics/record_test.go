package metrics

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/pipeline"
)

// docs reads the emitted documents' root keys.
func docs(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var root map[string]any
		if err := json.Unmarshal([]byte(line), &root); err != nil {
			t.Fatalf("document %q: %v", line, err)
		}
		out = append(out, root)
	}
	return out
}

// A record without instances, events or a time to measure from carries
// none of them, and its kind is "none".
func TestRecordWithoutDetails(t *testing.T) {
	e, buf := emitter()
	e.Record(context.Background(), handler.RecordSummary{MessageID: "m-1", Outcome: handler.OutcomeDone, Received: at})
	d := docs(t, buf)[0]
	for _, k := range []string{"instance_id", "event_id", MetricQueueLatency} {
		if v, ok := d[k]; ok {
			t.Errorf("%s = %v on a record without it", k, v)
		}
	}
	if d[DimKind] != "none" {
		t.Errorf("kind %v, want none", d[DimKind])
	}
}

// A drain blocked in an earlier run and done now reports no blocked time.
func TestDrainNoLongerBlocked(t *testing.T) {
	e, buf := emitter()
	e.RecordDrain("prod", drain.Report{Node: "n", Evicted: []string{"a/x"}, Done: true, BlockedSince: at.Add(-time.Minute)})
	e.RecordTask(handler.Task{InstanceID: "i-1", Interruptions: []event.Interruption{{Kind: event.KindASGLifecycle}}},
		handler.Result{Status: handler.StatusDone, Node: "n"}, time.Second)
	if v, ok := docs(t, buf)[0][MetricDrainBlockedFor]; ok {
		t.Errorf("%s = %v for a drain no longer blocked", MetricDrainBlockedFor, v)
	}
}

// The drain's kind is its task's primary interruption's: the earliest
// deadline, else the first.
func TestDrainKindIsThePrimarys(t *testing.T) {
	hook := event.Interruption{Kind: event.KindASGLifecycle}
	rebalance := event.Interruption{Kind: event.KindRebalanceRecommendation}
	spot := event.Interruption{Kind: event.KindSpotInterruption, Deadline: at.Add(2 * time.Minute)}
	retire := event.Interruption{Kind: event.KindScheduledChange, Deadline: at.Add(time.Hour)}
	for _, c := range []struct {
		ins  []event.Interruption
		want event.Kind
	}{
		{[]event.Interruption{hook}, event.KindASGLifecycle},
		{[]event.Interruption{hook, rebalance}, event.KindASGLifecycle},
		{[]event.Interruption{hook, spot}, event.KindSpotInterruption},
		{[]event.Interruption{retire, spot, hook}, event.KindSpotInterruption},
		{[]event.Interruption{spot, retire}, event.KindSpotInterruption},
	} {
		e, buf := emitter()
		e.RecordDrain("prod", drain.Report{Node: "n", Done: true})
		e.RecordTask(handler.Task{InstanceID: "i-1", Interruptions: c.ins}, handler.Result{Node: "n"}, time.Second)
		if got := docs(t, buf)[0][DimKind]; got != string(c.want) {
			t.Errorf("%v: kind %v, want %s", c.ins, got, c.want)
		}
	}
}

// A hook call's outcome: an error whatever else, already done only for a
// completion.
func TestHookOutcomes(t *testing.T) {
	l := event.Lifecycle{ASG: "asg", Hook: "drain", InstanceID: "i-1"}
	for _, c := range []struct {
		op          pipeline.HookOp
		alreadyDone bool
		err         error
		want        string
	}{
		{pipeline.HookComplete, true, nil, HookAlreadyDone},
		{pipeline.HookHeartbeat, true, nil, HookOK},
		{pipeline.HookComplete, false, nil, HookOK},
		{pipeline.HookComplete, true, errors.New("boom"), HookError},
	} {
		e, buf := emitter()
		e.RecordHook(c.op, l, c.alreadyDone, c.err)
		d := docs(t, buf)
		if d[0][DimOutcome] != c.want || (len(d) == 2) != (c.err != nil) {
			t.Errorf("op %v, already done %v, error %v: %v", c.op, c.alreadyDone, c.err, d)
		}
	}
}

// The request id and the stack go in every document without touching the
// caller's properties, which may be nil.
func TestEmitAddsRequestAndStack(t *testing.T) {
	for _, c := range []struct {
		name  string
		setup func(e *Emitter)
		key   string
	}{
		{"request id", func(e *Emitter) { e.SetRequestID("req-1") }, "request_id"},
		{"stack", func(e *Emitter) { e.WithStack("Drainpipe-prod") }, DimStack},
	} {
		e, buf := emitter()
		c.setup(e)
		e.Emit(Doc{Metrics: []Metric{{"Records", Count, 1}}})
		props := map[string]string{"a": "b"}
		e.Emit(Doc{Props: props, Metrics: []Metric{{"Records", Count, 1}}})
		for _, d := range docs(t, buf) {
			if d[c.key] == nil {
				t.Errorf("%s: document %v without it", c.name, d)
			}
		}
		if len(props) != 1 {
			t.Errorf("%s: the caller's properties became %v", c.name, props)
		}
	}
}
