package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
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

// A plain `go build` in a checkout reports a development version of the
// commit it was built from, never the bare release number: only `make
// release` stamps that.
func TestPlainBuildIsDevelopment(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("no git checkout: %v", err)
	}
	file, err := os.ReadFile(filepath.Join("..", "..", "internal", "version", "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "drainpipe")
	// -buildvcs=true: as a plain build does by default (GOFLAGS may say otherwise).
	if out, err := exec.Command("go", "build", "-buildvcs=true", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := "drainpipe " + strings.TrimSpace(string(file)) + "-dev+" + strings.TrimSpace(string(head))[:12]
	if !strings.HasPrefix(string(out), want) {
		t.Errorf("version printed %q, want it to start %q", out, want)
	}
}
