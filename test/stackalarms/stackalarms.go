// Package stackalarms reads the names of the alarms the stack creates from
// infra/stack's source, for the tests that keep what is written about
// them (runbooks, alert rules) to the stack.
package stackalarms

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// alarmRE finds CreateAlarm(scope, jsii.String("Name"), …), and
// EventBridge rules notifying the alarm topic, whose names end in Alarm.
var alarmRE = regexp.MustCompile(`(?:CreateAlarm\(\s*[\w.]+,\s*jsii\.String\("(\w+)"\))|(?:NewRule\(\s*[\w.]+,\s*jsii\.String\("(\w+Alarm)"\))`)

// Alarm is one alarm and whether CloudWatch makes it (else an EventBridge
// rule notifies the alarm topic).
type Alarm struct {
	Name       string
	CloudWatch bool
}

// Read returns the alarms in root/infra/stack's non-test Go files; it
// fails when it finds fewer than five, as when the way they are made has
// changed.
func Read(root string) ([]Alarm, error) {
	files, err := filepath.Glob(filepath.Join(root, "infra", "stack", "*.go"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no infra source under %s: %v", root, err)
	}
	var out []Alarm
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, m := range alarmRE.FindAllStringSubmatch(string(b), -1) {
			out = append(out, Alarm{Name: m[1] + m[2], CloudWatch: m[1] != ""})
		}
	}
	if len(out) < 5 {
		return nil, fmt.Errorf("found only the alarms %v in infra/stack: has the way they are made changed?", out)
	}
	return out, nil
}
