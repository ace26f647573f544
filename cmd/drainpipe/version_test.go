package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/drainpipe/drainpipe/internal/version"
)

func TestVersion(t *testing.T) {
	v := version.Get()
	for _, arg := range []string{"version", "--version"} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), cli{Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }}, []string{arg})
		if code != exitOK {
			t.Fatalf("%s: exit %d, stderr %s", arg, code, errOut.String())
		}
		got := out.String()
		for _, want := range []string{"drainpipe " + v.Version, "commit " + v.Commit, v.Go} {
			if !strings.Contains(got, want) {
				t.Errorf("%s printed %q, want it to contain %q", arg, got, want)
			}
		}
	}
}
