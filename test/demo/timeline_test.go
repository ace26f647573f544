package main

import (
	"bufio"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

// evictedRE finds a count of evicted pods in a timeline step or a reason.
var evictedRE = regexp.MustCompile(`(\d+) evicted`)

// TestTimelineCountsMatchRecords reads the bootstrap's log of a demo run
// (testdata/bootstrap.log, the -v output of `make demo`): each "drain
// ended" step counts the pods its record's reason counts, and the happy
// path shows no warning.
func TestTimelineCountsMatchRecords(t *testing.T) {
	f, err := os.Open("testdata/bootstrap.log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var records []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r map[string]any
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		records = append(records, r)
	}
	var ended, handled []string
	for _, s := range logSteps(records, names{}) {
		switch {
		case strings.HasPrefix(s.what, "drain ended"):
			ended = append(ended, evictedRE.FindString(s.what))
		case strings.HasPrefix(s.what, "record "):
			handled = append(handled, evictedRE.FindString(s.what))
		case strings.HasPrefix(s.what, "warn"), strings.HasPrefix(s.what, "error"):
			t.Errorf("the happy path shows %q", s.what)
		}
	}
	if len(ended) != 2 || len(handled) != 2 {
		t.Fatalf("%d drains ended and %d records handled, want 2 each", len(ended), len(handled))
	}
	for i := range ended {
		if ended[i] != handled[i] || ended[i] == "0 evicted" || ended[i] == "" {
			t.Errorf("drain %d: the timeline says %q, its record %q", i+1, ended[i], handled[i])
		}
	}
}
