package metrics

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/smithy-go"
	"github.com/google/go-cmp/cmp"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/pipeline"
	"github.com/drainpipe/drainpipe/internal/sweep"
)

var update = flag.Bool("update", false, "rewrite the golden files")

var at = time.Date(2026, 11, 20, 10, 0, 5, 0, time.UTC)

// emitter returns an Emitter on a buffer with a fixed clock.
func emitter() (*Emitter, *bytes.Buffer) {
	var buf bytes.Buffer
	e := New(&buf)
	e.now = func() time.Time { return at }
	return e, &buf
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run with -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", name, diff)
	}
}

func TestEmitGolden(t *testing.T) {
	spot := event.Interruption{Kind: event.KindSpotInterruption, Instances: []string{"i-0abc"}, EventID: "ev-1",
		Time: at.Add(-5 * time.Second), Deadline: at.Add(115 * time.Second)}
	hook := event.Lifecycle{ASG: "asg-a", Hook: "drain", Token: "secret-token", InstanceID: "i-0abc"}
	tests := []struct {
		name string
		emit func(e *Emitter)
	}{
		{"record.golden", func(e *Emitter) {
			e.SetRequestID("req-1")
			e.Record(context.Background(), handler.RecordSummary{MessageID: "m-1", Kinds: []event.Kind{event.KindSpotInterruption},
				Instances: []string{"i-0abc"}, EventIDs: []string{"ev-1"}, Outcome: handler.OutcomeDone,
				Duration: 1500 * time.Millisecond, EventTime: spot.Time, Received: at})
		}},
		{"drain.golden", func(e *Emitter) {
			e.RecordDrain("prod", drain.Report{Node: "ip-10-0-1-23.eu-west-1.compute.internal", Evicted: []string{"a/x", "a/y"},
				BlockedByPDB: []string{"b/z"}, Terminating: []string{"a/y"}, Elapsed: 2250 * time.Millisecond})
			e.RecordTask(handler.Task{InstanceID: "i-0abc", Interruptions: []event.Interruption{spot}},
				handler.Result{Status: handler.StatusRetry, Node: "ip-10-0-1-23.eu-west-1.compute.internal"}, 3*time.Second)
		}},
		{"hook.golden", func(e *Emitter) {
			e.RecordHook(pipeline.HookComplete, hook, false, nil)
			e.RecordHook(pipeline.HookHeartbeat, hook, false, &smithy.GenericAPIError{Code: "Throttling"})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, buf := emitter()
			tt.emit(e)
			if strings.Contains(buf.String(), hook.Token) {
				t.Error("a lifecycle token reached the metrics")
			}
			golden(t, tt.name, buf.Bytes())
		})
	}
}

// emf is the part of a document the tests read back.
type emf struct {
	AWS struct {
		Timestamp         int64
		CloudWatchMetrics []struct {
			Namespace  string
			Dimensions [][]string
			Metrics    []struct{ Name, Unit string }
		}
	} `json:"_aws"`
}

func TestEncodeIsValidEMF(t *testing.T) {
	b, err := Encode(Doc{Time: at, Dimensions: [][]string{{"kind"}, {}}, Props: map[string]string{"kind": "spot"},
		Metrics: []Metric{{"Records", Count, 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Count(b, []byte("\n")) != 1 || !bytes.HasSuffix(b, []byte("\n")) {
		t.Errorf("document %q is not exactly one line", b)
	}
	var got emf
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	var root map[string]any
	_ = json.Unmarshal(b, &root)
	d := got.AWS.CloudWatchMetrics[0]
	if got.AWS.Timestamp != at.UnixMilli() || d.Namespace != "Drainpipe" || root["Records"] != 1.0 || root["kind"] != "spot" {
		t.Errorf("document %s: want timestamp %d, namespace Drainpipe, Records 1 and kind spot at the root", b, at.UnixMilli())
	}
	if diff := cmp.Diff([][]string{{"kind"}, {}}, d.Dimensions); diff != "" {
		t.Errorf("dimensions (-want +got):\n%s", diff)
	}
}

func TestEncodeRejects(t *testing.T) {
	tests := []struct {
		name string
		doc  Doc
	}{
		{"dimension without value", Doc{Dimensions: [][]string{{"cluster"}}, Metrics: []Metric{{"Records", Count, 1}}}},
		{"metric named like a property", Doc{Props: map[string]string{"Records": "x"}, Metrics: []Metric{{"Records", Count, 1}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Encode(tt.doc); err == nil {
				t.Error("Encode succeeded, want an error")
			}
		})
	}
}

func TestRecordTaskWithoutDrainEmitsNothing(t *testing.T) {
	e, buf := emitter()
	e.RecordTask(handler.Task{InstanceID: "i-0abc"}, handler.Result{Status: handler.StatusIgnored, Reason: "not ours"}, time.Second)
	if buf.Len() != 0 {
		t.Errorf("emitted %q for a task that drained nothing", buf.String())
	}
}

func TestDeadlineHit(t *testing.T) {
	tests := []struct {
		name     string
		deadline time.Time
		done     bool
		want     float64
	}{
		{"unfinished past the deadline", at.Add(-time.Second), false, 1},
		{"unfinished before the deadline", at.Add(time.Minute), false, 0},
		{"finished past the deadline", at.Add(-time.Second), true, 0},
		{"no deadline", time.Time{}, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, buf := emitter()
			e.RecordDrain("c", drain.Report{Node: "n", Done: tt.done})
			e.RecordTask(handler.Task{Interruptions: []event.Interruption{{Kind: event.KindSpotInterruption, Deadline: tt.deadline}}},
				handler.Result{Status: handler.StatusDone, Node: "n"}, 0)
			var root map[string]any
			if err := json.Unmarshal(buf.Bytes(), &root); err != nil {
				t.Fatalf("output %q: %v", buf, err)
			}
			if root[MetricDeadlineHit] != tt.want {
				t.Errorf("DeadlineHit = %v, want %v", root[MetricDeadlineHit], tt.want)
			}
		})
	}
}

// A drain report the Run could not write on the node is counted, so an
// operator learns that DrainBlockedAlarm and `drainpipe nodes` are behind.
func TestReportsLost(t *testing.T) {
	for _, lost := range []bool{true, false} {
		e, buf := emitter()
		e.RecordDrain("c", drain.Report{Node: "n", ReportLost: lost})
		e.RecordTask(handler.Task{Interruptions: []event.Interruption{{Kind: event.KindSpotInterruption}}},
			handler.Result{Status: handler.StatusRetry, Node: "n"}, 0)
		var root map[string]any
		if err := json.Unmarshal(buf.Bytes(), &root); err != nil {
			t.Fatalf("output %q: %v", buf, err)
		}
		if want := oneIf(lost); root[MetricReportsLost] != want {
			t.Errorf("report lost %v: %s = %v, want %v", lost, MetricReportsLost, root[MetricReportsLost], want)
		}
	}
}

func TestErrorClass(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&smithy.GenericAPIError{Code: "ThrottlingException"}, "aws-throttled"},
		{&smithy.GenericAPIError{Code: "AccessDenied"}, "aws-access-denied"},
		{&smithy.GenericAPIError{Code: "ValidationError"}, "aws-other"},
		{errors.New("dial tcp: refused"), "aws-other"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := errorClass(tt.err); got != tt.want {
				t.Errorf("errorClass(%v) = %q, want %q", tt.err, got, tt.want)
			}
		})
	}
}

func TestRecordSweep(t *testing.T) {
	var buf bytes.Buffer
	e := New(&buf)
	e.RecordSweep(sweep.Report{Checked: 4, Repairs: []sweep.Repair{{What: sweep.RepairGivenBack}, {What: sweep.RepairGivenBack},
		{What: sweep.RepairOutOfService}, {What: sweep.RepairScheduled}}})
	e.RecordSweep(sweep.Report{Checked: 1, DryRun: true, Repairs: []sweep.Repair{{What: sweep.RepairGivenBack}}})
	var doc map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("want exactly one document (dry runs count nothing): %v\n%s", err, buf.String())
	}
	want := map[string]float64{MetricSweepNodesChecked: 4, MetricSweepGivenBack: 2, MetricSweepOutOfService: 1,
		MetricSweepScheduledEvents: 1, MetricSweepRepairs: 4}
	for name, v := range want {
		if doc[name] != v {
			t.Errorf("%s = %v, want %v", name, doc[name], v)
		}
	}
}

// Two stacks in one account and region: with a stack name, every dimension
// set (the aggregate the alarms use included) carries it, so one stack's
// alarms never see the other's metrics.
func TestStackDimension(t *testing.T) {
	e, buf := emitter()
	e.WithStack("Drainpipe-prod")
	e.Record(context.Background(), handler.RecordSummary{MessageID: "m-1", Outcome: handler.OutcomeDone, Received: at})
	e.Error("aws-other")
	var sets [][][]string
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var d emf
		var root map[string]any
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatal(err)
		}
		_ = json.Unmarshal([]byte(line), &root)
		if root[DimStack] != "Drainpipe-prod" {
			t.Errorf("document %s: stack = %v, want Drainpipe-prod", line, root[DimStack])
		}
		sets = append(sets, d.AWS.CloudWatchMetrics[0].Dimensions)
	}
	want := [][][]string{{{DimKind, DimOutcome, DimStack}, {DimOutcome, DimStack}, {DimStack}}, {{DimClass, DimStack}}}
	if diff := cmp.Diff(want, sets); diff != "" {
		t.Errorf("dimension sets (-want +got):\n%s", diff)
	}
	// Without a name, the documents are as before: no stack anywhere.
	e, buf = emitter()
	e.Error("aws-other")
	if strings.Contains(buf.String(), DimStack) {
		t.Errorf("no stack set, yet %s", buf)
	}
}

// DrainBlockedFor counts a blocked drain's time since its first refusal,
// across runs, so one datapoint per run is enough for the stack's alarm
// whatever the function timeout; an unblocked run emits none.
func TestDrainBlockedFor(t *testing.T) {
	hook := event.Interruption{Kind: event.KindASGLifecycle, EventID: "ev-1"}
	for _, tt := range []struct {
		name string
		rep  drain.Report
		want any
	}{
		{"blocked for 20 minutes over several runs", drain.Report{Node: "n", BlockedByPDB: []string{"a/db-0"}, BlockedSince: at.Add(-20 * time.Minute)}, 1200.0},
		{"not blocked", drain.Report{Node: "n", Evicted: []string{"a/x"}, Done: true}, nil},
		{"no longer blocked", drain.Report{Node: "n", BlockedSince: at.Add(-20 * time.Minute)}, nil},
		{"blocked since now", drain.Report{Node: "n", BlockedByPDB: []string{"a/db-0"}, BlockedSince: at}, nil},
		{"blocked since an unknown time", drain.Report{Node: "n", BlockedByPDB: []string{"a/db-0"}}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, buf := emitter()
			e.RecordDrain("prod", tt.rep)
			e.RecordTask(handler.Task{InstanceID: "i-0abc", Interruptions: []event.Interruption{hook}},
				handler.Result{Status: handler.StatusRetry, Node: "n"}, time.Second)
			var root map[string]any
			if err := json.Unmarshal(buf.Bytes(), &root); err != nil {
				t.Fatalf("output %q: %v", buf, err)
			}
			if root[MetricDrainBlockedFor] != tt.want {
				t.Errorf("%s = %v, want %v", MetricDrainBlockedFor, root[MetricDrainBlockedFor], tt.want)
			}
		})
	}
}
