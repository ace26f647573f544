package main

import (
	"io"
	"strings"
	"testing"
	"time"
)

func TestSummarise(t *testing.T) {
	stream := strings.Join([]string{
		`{"Action":"run","Package":"p","Test":"TestA"}`,
		`{"Action":"pass","Package":"p","Test":"TestA"}`,
		`{"Action":"output","Package":"p","Test":"TestB/sub","Output":"boom\n"}`,
		`{"Action":"fail","Package":"p","Test":"TestB/sub"}`,
		`{"Action":"fail","Package":"p","Test":"TestB"}`,
		`{"Action":"skip","Package":"p","Test":"TestC"}`,
		`{"Action":"pass","Package":"p","Test":"TestD/sub"}`,
		`{"Action":"pass","Package":"p","Test":"TestD"}`,
		`{"Action":"fail","Package":"p"}`,
		`# q`,
		`q/x.go:1:1: syntax error`,
		`{"Action":"output","Package":"q","Output":"FAIL q [build failed]\n"}`,
		`{"Action":"fail","Package":"q"}`,
		`{"Action":"pass","Package":"r"}`,
	}, "\n")
	var log strings.Builder
	r, err := summarise(strings.NewReader(stream), &log)
	if err != nil {
		t.Fatal(err)
	}
	want := result{passedTests: 2, failedTests: 1, skippedTests: 1, failedPkgs: 1}
	if r != want {
		t.Errorf("summarise = %+v, want %+v", r, want)
	}
	for _, s := range []string{"--- FAIL p TestB/sub\nboom\n", "--- FAIL q\nFAIL q [build failed]\n"} {
		if !strings.Contains(log.String(), s) {
			t.Errorf("log lacks %q:\n%s", s, log.String())
		}
	}
	if r.passed() {
		t.Error("a run with a failed test passed")
	}
}

func TestSummariseBadLine(t *testing.T) {
	if _, err := summarise(strings.NewReader(`{"Action":`), io.Discard); err == nil {
		t.Error("a truncated event was accepted")
	}
}

func TestRow(t *testing.T) {
	r := result{passedTests: 310, skippedTests: 2, wall: 754*time.Second + 400*time.Millisecond}
	got := r.row("v1.32.13", "abc1234")
	want := "| 1.32 | `v1.32.13` | passed: 310 passed, 0 failed, 2 skipped (12m34s) | `abc1234` | `make test-matrix K8S_MATRIX=v1.32.13` |"
	if got != want {
		t.Errorf("row =\n%s\nwant\n%s", got, want)
	}
	r.failedPkgs = 1
	if got := r.row("v1.36.3", "abc1234"); !strings.Contains(got, "| failed: 310 passed, 0 failed, 2 skipped, 1 package(s) failed outside a test (12m34s) |") {
		t.Errorf("row with a failed package = %s", got)
	}
}

func TestRunNeedsVersionsAndPackages(t *testing.T) {
	err := run(t.Context(), nil, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "-versions") || !strings.Contains(err.Error(), "no packages") {
		t.Errorf("run without arguments = %v, want both problems listed", err)
	}
}
