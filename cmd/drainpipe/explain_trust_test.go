package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestExplainRejectsFutureEvents: explain cannot know the account, but it
// refuses what the function refuses on any clock: events from the future.
func TestExplainRejectsFutureEvents(t *testing.T) {
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	body := strings.Replace(readBody(t, "eventbridge-spot-interruption.json"), "2026-11-20T10:00:00Z", future, 1)
	code, out, stderr := runCLI(t, nil, body, "explain")
	var e explanation
	if err := json.Unmarshal([]byte(out), &e); code != exitOK || err != nil {
		t.Fatalf("exit %d, %v: %q %q", code, err, out, stderr)
	}
	if e.Outcome != "reject" || !strings.Contains(e.Reason, "in the future") {
		t.Errorf("future spot warning: outcome %q reason %q, want a rejection for its time", e.Outcome, e.Reason)
	}
}

// TestExplainAccept: with DRAINPIPE_ACCEPT set, explain refuses the other
// shapes as the function would; unset, it reads every shape.
func TestExplainAccept(t *testing.T) {
	sns := readBody(t, "sns-asg-lifecycle-terminating.json")
	if e := explainOne(t, map[string]string{"DRAINPIPE_ACCEPT": "eventbridge"}, sns); e.Outcome != "reject" || !strings.Contains(e.Reason, "shape sns") {
		t.Errorf("sns with DRAINPIPE_ACCEPT=eventbridge: outcome %q reason %q, want rejected for its shape", e.Outcome, e.Reason)
	}
	if e := explainOne(t, nil, sns); e.Outcome != "act" {
		t.Errorf("sns with DRAINPIPE_ACCEPT unset: outcome %q reason %q, want act", e.Outcome, e.Reason)
	}
}
