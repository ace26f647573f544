package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// header is the table's head in docs/support.md.
const header = "| Kubernetes | Sandbox tag | Result | Commit | Command |\n|---|---|---|---|---|"

// result counts one version's tests: top-level tests only (a subtest's
// outcome is its parent's).
type result struct {
	passedTests, failedTests, skippedTests int
	failedPkgs                             int // packages failing outside any test (build, TestMain, panic)
	wall                                   time.Duration
}

func (r result) passed() bool { return r.failedTests == 0 && r.failedPkgs == 0 }

// row is the version's line in docs/support.md's table.
func (r result) row(version, commit string) string {
	minor := strings.Join(strings.SplitN(strings.TrimPrefix(version, "v"), ".", 3)[:2], ".")
	verdict := "passed"
	if !r.passed() {
		verdict = "failed"
	}
	counts := fmt.Sprintf("%d passed, %d failed, %d skipped", r.passedTests, r.failedTests, r.skippedTests)
	if r.failedPkgs > 0 {
		counts += fmt.Sprintf(", %d package(s) failed outside a test", r.failedPkgs)
	}
	return fmt.Sprintf("| %s | `%s` | %s: %s (%s) | `%s` | `make test-matrix K8S_MATRIX=%s` |",
		minor, version, verdict, counts, r.wall.Round(time.Second), commit, version)
}

// event is one line of go test -json.
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// summarise counts the stream's outcomes and writes the output of every
// failed test and package to log, so a failure can be read without the
// stream.
func summarise(stream io.Reader, log io.Writer) (result, error) {
	var r result
	failedIn := map[string]bool{}           // packages with a failed test
	output := map[string]*strings.Builder{} // package + test -> its output
	sc := bufio.NewScanner(stream)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' {
			continue // go test writes build errors as plain text too
		}
		var e event
		if err := json.Unmarshal(line, &e); err != nil {
			return r, fmt.Errorf("%q: %w", line, err)
		}
		key := e.Package + " " + e.Test
		switch e.Action {
		case "output":
			if output[key] == nil {
				output[key] = &strings.Builder{}
			}
			output[key].WriteString(e.Output)
			continue
		case "pass", "fail", "skip":
		default:
			continue
		}
		if e.Action == "fail" {
			fmt.Fprintf(log, "--- FAIL %s\n", strings.TrimSpace(key))
			if b := output[key]; b != nil {
				fmt.Fprint(log, b.String())
			}
		}
		delete(output, key)
		if strings.Contains(e.Test, "/") {
			continue
		}
		switch {
		case e.Test == "" && e.Action == "fail":
			if !failedIn[e.Package] {
				r.failedPkgs++
			}
		case e.Test == "":
		case e.Action == "pass":
			r.passedTests++
		case e.Action == "fail":
			r.failedTests++
			failedIn[e.Package] = true
		case e.Action == "skip":
			r.skippedTests++
		}
	}
	return r, sc.Err()
}
