package stack

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// How the docs name a stack output: a describe-stacks query, the
// local-testing recipe's `out` helper, and prose ("output `X`", "outputs
// `X` and `Y`").
var (
	outputQuery = regexp.MustCompile(`OutputKey=='([A-Za-z0-9]+)'`)
	outputOut   = regexp.MustCompile(`\$\(out ([A-Za-z0-9]+)\)`)
	outputProse = regexp.MustCompile("outputs?\\s+((?:`[A-Za-z0-9]+`(?:,\\s*|\\s+and\\s+)?)+)")
	backticked  = regexp.MustCompile("`([A-Za-z0-9]+)`")
	// The function logs to the stack's log group, not Lambda's default.
	defaultLogGroup = regexp.MustCompile(`(tail|--log-group-names?)\s+"?/aws/lambda/`)
)

// docOutputs returns each output name the operator docs use, with the
// files that use it.
func docOutputs(t *testing.T) map[string][]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join("..", "..", "README.md"))
	used := map[string][]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(f)
		add := func(out string) {
			if !slices.Contains(used[out], name) {
				used[out] = append(used[out], name)
			}
		}
		for _, re := range []*regexp.Regexp{outputQuery, outputOut} {
			for _, m := range re.FindAllStringSubmatch(string(b), -1) {
				add(m[1])
			}
		}
		for _, m := range outputProse.FindAllStringSubmatch(string(b), -1) {
			for _, n := range backticked.FindAllStringSubmatch(m[1], -1) {
				add(n[1])
			}
		}
		if loc := defaultLogGroup.FindIndex(b); loc != nil {
			t.Errorf("%s reads the log group /aws/lambda/…: the stack's function logs to its own group (output LogGroupName)", name)
		}
	}
	return used
}

// TestDocsUseOnlyRealOutputs: every stack output a doc tells the operator
// to read exists in the synthesized template (with every optional output
// on), and no doc tails Lambda's default log group, which the function
// does not write to.
func TestDocsUseOnlyRealOutputs(t *testing.T) {
	used := docOutputs(t)
	for _, want := range []string{"FunctionName", "LogGroupName", "QueueArn"} {
		if _, ok := used[want]; !ok {
			t.Fatalf("the docs' outputs %v lack %s: are the patterns still right?", slices.Sorted(maps.Keys(used)), want)
		}
	}
	p := testProps(t)
	p.ASGNotificationRole = true
	tpl := synth(t, p)
	for _, out := range slices.Sorted(maps.Keys(used)) {
		if _, ok := tpl.Outputs[out]; !ok {
			t.Errorf("%v use the output %s; the stack's outputs are %v", used[out], out, slices.Sorted(maps.Keys(tpl.Outputs)))
		}
	}
}
