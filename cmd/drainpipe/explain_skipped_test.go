package main

import (
	"strings"
	"testing"
)

// explain names each entity of a Health notice the function skips, and
// why, beside its verdict on the others.
func TestExplainNamesSkippedEntities(t *testing.T) {
	body := strings.ReplaceAll(readBody(t, "eventbridge-health-one-bad-entity.json"), "i-NOTHEX", "i-XYZ")
	e := explainLines(t, body, "--now", "2026-11-06T06:28:27Z")[0]
	if e.Outcome != "act" {
		t.Errorf("outcome %q, want act on the well-formed instances", e.Outcome)
	}
	for _, s := range []string{`malformed instance ID "i-XYZ" (entity 1)`, "entity 2 is not an object with a string entityValue"} {
		if !strings.Contains(e.Reason, s) {
			t.Errorf("reason %q does not name %q", e.Reason, s)
		}
	}
}
