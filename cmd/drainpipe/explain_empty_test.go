package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Empty input is bad input: one verdict says so, and the exit code is the
// one for bad input, whether the input is an empty file, empty standard
// input or blanks.
func TestExplainEmptyInput(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty.json")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		stdin string
		args  []string
	}{
		"empty file":     {args: []string{empty}},
		"empty stdin":    {},
		"stdin as dash":  {args: []string{"-"}},
		"blank stdin":    {stdin: " \n\t\n"},
		"empty and more": {stdin: "", args: []string{empty, empty}},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, stderr := runCLI(t, nil, c.stdin, append([]string{"explain"}, c.args...)...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d (bad input); stderr %q", code, exitUsage, stderr)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if want := max(1, len(c.args)); len(lines) != want || lines[0] == "" {
				t.Fatalf("output %q, want %d verdict line(s)", out, want)
			}
			for _, l := range lines {
				var e explanation
				if err := json.Unmarshal([]byte(l), &e); err != nil {
					t.Fatalf("line %q: %v", l, err)
				}
				if e.Outcome != "reject" || !strings.Contains(e.Reason, "empty") {
					t.Errorf("verdict %+v, want reject, empty message", e)
				}
			}
			if !strings.Contains(stderr, "empty") {
				t.Errorf("stderr %q, want the empty input named", stderr)
			}
		})
	}
}
