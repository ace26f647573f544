package metrics

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/smithy-go"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/pipeline"
	"github.com/drainpipe/drainpipe/internal/sweep"
)

// TestCatalogMatchesEmitted drives every recorder and checks that each
// metric written (name, unit, dimension set) is in Catalog, and that
// Catalog names nothing the recorders never write.
func TestCatalogMatchesEmitted(t *testing.T) {
	e, buf := emitter()
	spot := event.Interruption{Kind: event.KindSpotInterruption, EventID: "ev-1", Time: at.Add(-5 * time.Second), Deadline: at.Add(-time.Second)}
	e.Record(context.Background(), handler.RecordSummary{MessageID: "m-1", Kinds: []event.Kind{event.KindSpotInterruption},
		Outcome: handler.OutcomeDone, Duration: time.Second, EventTime: spot.Time, Received: at})
	e.RecordDrain("prod", drain.Report{Node: "n", BlockedByPDB: []string{"a/db-0"}, BlockedSince: at.Add(-time.Minute)})
	e.RecordTask(handler.Task{InstanceID: "i-0abc", Interruptions: []event.Interruption{spot}},
		handler.Result{Status: handler.StatusRetry, Node: "n"}, time.Second)
	hook := event.Lifecycle{ASG: "asg-a", Hook: "drain", InstanceID: "i-0abc"}
	e.RecordHook(pipeline.HookComplete, hook, false, nil)
	e.RecordHook(pipeline.HookHeartbeat, hook, false, &smithy.GenericAPIError{Code: "Throttling"})
	e.RecordSweep(sweep.Report{Checked: 1})

	catalog := map[string]Published{}
	for _, p := range Catalog() {
		catalog[p.Name] = p
	}
	type key struct{ name, dims string }
	seen := map[key]bool{}
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var d emf
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatalf("document %s: %v", line, err)
		}
		for _, cw := range d.AWS.CloudWatchMetrics {
			for _, m := range cw.Metrics {
				p, ok := catalog[m.Name]
				if !ok {
					t.Errorf("metric %s is written but not in Catalog", m.Name)
					continue
				}
				if string(p.Unit) != m.Unit {
					t.Errorf("metric %s: written in %s, Catalog says %s", m.Name, m.Unit, p.Unit)
				}
				for _, set := range cw.Dimensions {
					if !slices.ContainsFunc(p.Dimensions, func(s []string) bool { return slices.Equal(s, set) }) {
						t.Errorf("metric %s: written with dimensions %v, not in Catalog %v", m.Name, set, p.Dimensions)
					}
					seen[key{m.Name, strings.Join(set, ",")}] = true
				}
			}
		}
	}
	for _, p := range Catalog() {
		for _, set := range p.Dimensions {
			if !seen[key{p.Name, strings.Join(set, ",")}] {
				t.Errorf("Catalog lists %s with dimensions %v, never written", p.Name, set)
			}
		}
	}
}
