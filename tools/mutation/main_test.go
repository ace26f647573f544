package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestSummaryFailsAPackageBelowAThreshold(t *testing.T) {
	// 9 killed, 1 lived, 1 timed out, 1 not covered: efficacy 90 %, coverage 10 of 11.
	doc := `{"files":[{"file_name":"hold.go","mutations":[
		{"type":"CONDITIONALS_BOUNDARY","status":"LIVED","line":12,"column":7},
		{"type":"ARITHMETIC_BASE","status":"TIMED OUT","line":13,"column":2},
		{"type":"ARITHMETIC_BASE","status":"NOT COVERED","line":14,"column":2},
		{"type":"ARITHMETIC_BASE","status":"NOT VIABLE","line":15,"column":2}
		]},{"file_name":"age.go","mutations":[` + strings.Repeat(`{"type":"INVERT_NEGATIVES","status":"KILLED","line":1,"column":1},`, 8) +
		`{"type":"INVERT_NEGATIVES","status":"KILLED","line":1,"column":1}]}]}`
	var rep report
	if err := json.Unmarshal([]byte(doc), &rep); err != nil {
		t.Fatal(err)
	}
	r, err := count("handler", rep)
	if err != nil {
		t.Fatal(err)
	}
	if r.killed != 9 || r.lived != 1 || r.timedOut != 1 || r.notCovered != 1 || r.notViable != 1 {
		t.Fatalf("counts = %+v", r)
	}
	if r.efficacy() != 90 {
		t.Errorf("efficacy = %v, want 90", r.efficacy())
	}
	var out strings.Builder
	if failed := summarise(&out, []result{r}, 90, 90); len(failed) != 0 {
		t.Errorf("exactly at 90 %% efficacy failed: %v", failed)
	}
	if failed := summarise(&out, []result{r}, 90.1, 0); len(failed) != 1 || failed[0] != "handler" {
		t.Errorf("below the efficacy threshold: failed = %v, want [handler]", failed)
	}
	if failed := summarise(&out, []result{r}, 0, 91); len(failed) != 1 {
		t.Errorf("coverage %.2f below 91: failed = %v, want [handler]", r.coverage(), failed)
	}
	if !strings.Contains(out.String(), "lived: handler/hold.go:12:7 CONDITIONALS_BOUNDARY") {
		t.Errorf("survivor not listed:\n%s", out.String())
	}
}

func TestUnknownStatusIsAnError(t *testing.T) {
	var rep report
	if err := json.Unmarshal([]byte(`{"files":[{"file_name":"a.go","mutations":[{"status":"MAYBE"}]}]}`), &rep); err != nil {
		t.Fatal(err)
	}
	if _, err := count("x", rep); err == nil {
		t.Fatal("an unknown status was counted")
	}
}
