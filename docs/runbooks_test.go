package docs

import (
	"os"
	"regexp"
	"testing"

	"github.com/drainpipe/drainpipe/test/stackalarms"
)

// TestEveryAlarmHasARunbook reads the alarm names from the infra source and
// requires a "### Name" runbook in operations.md for each.
func TestEveryAlarmHasARunbook(t *testing.T) {
	alarms, err := stackalarms.Read("..")
	if err != nil {
		t.Fatal(err)
	}
	ops, err := os.ReadFile("operations.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range alarms {
		if !regexp.MustCompile(`(?m)^### ` + a.Name + `$`).Match(ops) {
			t.Errorf("alarm %s has no runbook (a '### %s' heading in docs/operations.md)", a.Name, a.Name)
		}
	}
}
