package pipeline

import (
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
)

// A record's reason tells an operator what the drain did and what holds
// it: each count appears once it is above zero, the first blocked pod
// with its budget.
func TestSummary(t *testing.T) {
	tests := []struct {
		rep  drain.Report
		want string
	}{
		{drain.Report{}, "0 evicted, 0 blocked by PDB, 0 still terminating, 0 skipped, in 0s"},
		{drain.Report{Evicted: []string{"a", "b"}, BlockedByPDB: []string{"c"}, Terminating: []string{"d"},
			Pending: []string{"e"}, DeletedAtDeadline: []string{"f"}, Stuck: []string{"g"},
			Failed: []drain.Skipped{{Pod: "ns/h", Reason: "forbidden"}, {Pod: "ns/i"}}, Skipped: []drain.Skipped{{}},
			Blocks:  []drain.Block{{Pod: "ns/x", Budget: "web", Evicted: true}, {Pod: "ns/y"}, {Pod: "ns/c", Budget: "db", Refusals: 3}},
			Elapsed: 1500 * time.Millisecond},
			"2 evicted, 1 blocked by PDB (first: ns/c by PodDisruptionBudget db, refused 3 times), 1 still terminating, " +
				"1 not started, 1 deleted at the deadline despite their budget, 1 stuck terminating, " +
				"2 refused (first: ns/h: forbidden), 1 skipped, in 1.5s"},
	}
	for _, tt := range tests {
		if got := summary(tt.rep); got != tt.want {
			t.Errorf("summary\n got %q\nwant %q", got, tt.want)
		}
	}
}

func TestVerb(t *testing.T) {
	if verb(drain.Request{Evict: true}) != "cordon and drain" || verb(drain.Request{}) != "cordon" {
		t.Error("verb names the wrong action")
	}
}

// LateNote is empty until the task's first deadline has come, then says
// the node is only cordoned and tainted, and for how long the deadline is
// past.
func TestLateNote(t *testing.T) {
	at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	task := handler.Task{Interruptions: []event.Interruption{
		{Kind: event.KindRebalanceRecommendation},
		{Kind: event.KindSpotInterruption, Deadline: at.Add(time.Minute)},
		{Kind: event.KindScheduledChange, Deadline: at},
	}}
	for now, want := range map[time.Time]string{
		at.Add(-time.Second):     "",
		at:                       "scheduled-change deadline passed 0s ago: cordon and taint only (the instance's state changes drive the rest); ",
		at.Add(90 * time.Second): "scheduled-change deadline passed 1m30s ago: cordon and taint only (the instance's state changes drive the rest); ",
	} {
		if got := LateNote(task, now); got != want {
			t.Errorf("LateNote at %v = %q, want %q", now, got, want)
		}
	}
	if got := LateNote(handler.Task{Interruptions: []event.Interruption{{Kind: event.KindRebalanceRecommendation}}}, at); got != "" {
		t.Errorf("LateNote without a deadline = %q", got)
	}
}
