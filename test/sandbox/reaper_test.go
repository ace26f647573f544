package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// reaperHelperEnv makes TestReaperHelper act: it runs in a child copy of
// this test binary.
const reaperHelperEnv = "DRAINPIPE_SANDBOX_REAPER_HELPER"

// TestReaperHelper is the child of TestReaperAfterPanic: it makes a
// sandbox-like directory with its reaper, prints the path and panics, as a
// test that times out does (the testing package panics then too).
func TestReaperHelper(t *testing.T) {
	switch os.Getenv(reaperHelperEnv) {
	case "":
		t.Skip("helper process of TestReaperAfterPanic")
	case "sandbox": // a real one, left running
		ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
		defer cancel()
		sb, err := Start(ctx, Options{})
		if err != nil {
			t.Fatal(err)
		}
		os.Stdout.WriteString(sb.Dir() + "\n")
		panic("test timed out")
	}
	dir, err := os.MkdirTemp("", "drainpipe-sandbox-")
	if err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"etcd/member/wal", "logs", "pki"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"etcd/member/wal/0.wal", "logs/etcd.log", "pki/ca.crt", ".hidden"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := startReaper(dir); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString(dir + "\n")
	panic("test timed out")
}

// A test binary that dies without Stop (timeout, panic) leaves only the
// component logs behind.
func TestReaperAfterPanic(t *testing.T) {
	dir, stderr := runReaperHelper(t, "dir")
	want := []string{"", "/logs", "/logs/etcd.log"}
	if got := walk(dir); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("left behind %q, want %q\nhelper stderr:\n%s", got, want, stderr)
	}
	if !strings.Contains(stderr, "component logs kept in "+dir+"/logs") {
		t.Errorf("the reaper did not say where the logs are:\n%s", stderr)
	}
}

// The same with a real sandbox: Start arms the reaper.
func TestSandboxDirRemovedAfterPanic(t *testing.T) {
	if testing.Short() {
		t.Skip("sandbox test: skipped with -short")
	}
	if err := CheckBinaries(DefaultBinDir(os.Getenv)); err != nil {
		t.Fatal(err)
	}
	dir, stderr := runReaperHelper(t, "sandbox")
	for _, p := range walk(dir) {
		if p != "" && p != "/logs" && !strings.HasPrefix(p, "/logs/") {
			t.Errorf("left behind %s\nhelper stderr:\n%s", p, stderr)
		}
	}
}

// runReaperHelper runs TestReaperHelper in a child test binary and returns
// the directory it made and its stderr.
func runReaperHelper(t *testing.T, mode string) (dir, stderr string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestReaperHelper$")
	cmd.Env = append(os.Environ(), reaperHelperEnv+"="+mode)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	// Run returns once the helper and its reaper, which shares its stderr,
	// have both exited.
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("helper: %v, want a panic's exit\n%s", err, errOut.String())
	}
	dir, _ = bufio.NewReader(&out).ReadString('\n')
	dir = strings.TrimSpace(dir)
	if !strings.Contains(dir, "drainpipe-sandbox-") {
		t.Fatalf("helper printed no directory: %q\n%s", out.String(), errOut.String())
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir, errOut.String()
}

// walk lists the paths under dir, relative to it ("" is dir itself).
func walk(dir string) []string {
	var paths []string
	_ = filepath.WalkDir(dir, func(p string, _ os.DirEntry, _ error) error {
		paths = append(paths, strings.TrimPrefix(p, dir))
		return nil
	})
	return paths
}

// Released, the reaper leaves the directory alone.
func TestReaperReleased(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "kept"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := startReaper(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.release(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "kept")); err != nil {
		t.Errorf("released reaper removed files: %v", err)
	}
}
