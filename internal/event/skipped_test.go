package event

import (
	"bytes"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A Health notice naming valid instances beside malformed entities acts on
// the valid ones and names each entity it skipped, with why.
func TestHealthNamesSkippedEntities(t *testing.T) {
	body := bytes.ReplaceAll(readTestdata(t, "eventbridge-health-one-bad-entity.json"), []byte("i-NOTHEX"), []byte("i-XYZ"))
	got, err := Parse(body)
	if err != nil || len(got.Interruptions) != 1 {
		t.Fatalf("Parse = %+v, %v; want one interruption", got, err)
	}
	in := got.Interruptions[0]
	if diff := cmp.Diff([]string{"i-0aaaa1111bbbb2222", "i-0cccc3333dddd4444"}, in.Instances); diff != "" {
		t.Errorf("instances (-want +got):\n%s", diff)
	}
	want := []string{`malformed instance ID "i-XYZ" (entity 1)`, "entity 2 is not an object with a string entityValue"}
	if diff := cmp.Diff(want, in.Skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	for _, s := range want {
		if !bytes.Contains([]byte(in.Summary), []byte(s)) {
			t.Errorf("summary %q does not name %q", in.Summary, s)
		}
	}
	if slices.Contains(in.Instances, "i-XYZ") {
		t.Errorf("malformed instance acted on: %v", in.Instances)
	}
}
