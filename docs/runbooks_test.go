package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// alarmRE finds the alarms the stack creates: CreateAlarm(scope, jsii.String("Name"), …),
// and EventBridge rules notifying the alarm topic, whose names end in Alarm.
var alarmRE = regexp.MustCompile(`(?:CreateAlarm\(\s*[\w.]+,\s*jsii\.String\("(\w+)"\))|(?:NewRule\(\s*[\w.]+,\s*jsii\.String\("(\w+Alarm)"\))`)

// TestEveryAlarmHasARunbook reads the alarm names from the infra source and
// requires a "### Name" runbook in operations.md for each.
func TestEveryAlarmHasARunbook(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "infra", "stack", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no infra source: %v", err)
	}
	var alarms []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range alarmRE.FindAllStringSubmatch(string(b), -1) {
			alarms = append(alarms, m[1]+m[2])
		}
	}
	if len(alarms) < 5 {
		t.Fatalf("found only the alarms %v in infra/stack: has the way they are made changed?", alarms)
	}
	ops, err := os.ReadFile("operations.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range alarms {
		if !regexp.MustCompile(`(?m)^### ` + a + `$`).Match(ops) {
			t.Errorf("alarm %s has no runbook (a '### %s' heading in docs/operations.md)", a, a)
		}
	}
}
