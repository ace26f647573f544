package metrics

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
)

// A record without instances or event ids has no such properties (an
// empty one would match every "instance_id" query).
func TestRecordWithoutInstances(t *testing.T) {
	e, buf := emitter()
	e.Record(context.Background(), handler.RecordSummary{MessageID: "m-1", Outcome: "rejected"})
	var doc map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"instance_id", "event_id", MetricQueueLatency} {
		if v, ok := doc[key]; ok {
			t.Errorf("document has %s = %v, want none", key, v)
		}
	}
	if doc[DimKind] != "none" || doc["message_id"] != "m-1" {
		t.Errorf("document %v, want kind none and the message id", doc)
	}
}

// The request id and the stack are added to a copy of the document's
// properties: the caller's map is left as it was, and a document without
// properties gets them too.
func TestEmitLeavesTheCallersProps(t *testing.T) {
	for name, set := range map[string]func(*Emitter){
		"request id": func(e *Emitter) { e.SetRequestID("req-1") },
		"stack":      func(e *Emitter) { e.WithStack("blue") },
	} {
		e, buf := emitter()
		set(e)
		props := map[string]string{"node": "n1"}
		e.Emit(Doc{Props: props, Metrics: []Metric{{"X", Count, 1}}})
		e.Emit(Doc{Metrics: []Metric{{"Y", Count, 1}}})
		if len(props) != 1 {
			t.Errorf("%s: the caller's properties became %v", name, props)
		}
		dec := json.NewDecoder(buf)
		for range 2 {
			var doc map[string]any
			if err := dec.Decode(&doc); err != nil {
				t.Fatalf("%s: %v (output %q)", name, err, buf.String())
			}
			if doc["request_id"] != "req-1" && doc[DimStack] != "blue" {
				t.Errorf("%s: document %v lacks it", name, doc)
			}
		}
	}
}

// A task's drain is counted under its first interruption's kind when
// none has a deadline, else under the earliest deadline's.
func TestTaskKind(t *testing.T) {
	soon, later := at.Add(time.Minute), at.Add(time.Hour)
	for _, tt := range []struct {
		ins  []event.Interruption
		want event.Kind
	}{
		{[]event.Interruption{{Kind: event.KindRebalanceRecommendation}, {Kind: event.KindScheduledChange}}, event.KindRebalanceRecommendation},
		{[]event.Interruption{{Kind: event.KindRebalanceRecommendation}, {Kind: event.KindScheduledChange, Deadline: later},
			{Kind: event.KindSpotInterruption, Deadline: soon}}, event.KindSpotInterruption},
		{[]event.Interruption{{Kind: event.KindSpotInterruption, Deadline: soon}, {Kind: event.KindScheduledChange, Deadline: later}}, event.KindSpotInterruption},
	} {
		e, buf := emitter()
		e.RecordDrain("prod", drain.Report{Node: "n"})
		e.RecordTask(handler.Task{Interruptions: tt.ins}, handler.Result{Status: handler.StatusDone, Node: "n"}, 0)
		var doc map[string]any
		if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		if doc[DimKind] != string(tt.want) {
			t.Errorf("kind %v, want %s", doc[DimKind], tt.want)
		}
	}
}
