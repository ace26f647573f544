package docs

import (
	"os"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/drainpipe/drainpipe/internal/drain"
)

// markRowRE matches a row of return-to-service.md's table of marks.
var markRowRE = regexp.MustCompile("(?m)^\\| `([^`]+)` \\| ([a-z ]+) \\| ([A-Za-z ]+) \\| .+ \\|$")

// TestReturnToServiceListsMarks keeps the operators' list of marks to the
// one in internal/drain/marks.go: a key added, dropped or moved there
// fails here until the table says so.
func TestReturnToServiceListsMarks(t *testing.T) {
	doc, err := os.ReadFile("return-to-service.md")
	if err != nil {
		t.Fatal(err)
	}
	var got []drain.MarkKey
	for _, m := range markRowRE.FindAllStringSubmatch(string(doc), -1) {
		got = append(got, drain.MarkKey{Key: m[1], On: m[2], Writer: m[3]})
	}
	if diff := cmp.Diff(drain.MarkKeys(), got); diff != "" {
		t.Errorf("return-to-service.md's marks (-marks.go +doc):\n%s", diff)
	}
}
