package sandbox

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// startTimeout bounds a shared start; a warm start takes a few seconds, but
// the machine may be busy compiling.
const startTimeout = 90 * time.Second

// shared is the one sandbox of a test binary.
var shared struct {
	mu      sync.Mutex
	main    bool    // Main is running the tests
	opts    Options // what MainWith asked for
	started bool
	sb      *Sandbox
	err     error
}

// ForTest returns the test binary's shared sandbox, starting it on first
// use. It skips the test under -short, and fails it with "run make
// sandbox-build" when the binaries are missing. The package's TestMain must
// call Main so the sandbox is stopped when the tests end.
//
// Tests share the control plane: isolate with a namespace per test and
// uniquely named nodes (package fixture does both).
func ForTest(t testing.TB) *Sandbox {
	t.Helper()
	if testing.Short() {
		t.Skip("sandbox test: skipped with -short")
	}
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if !shared.main {
		t.Fatal("sandbox.ForTest needs a TestMain that calls sandbox.Main(m)")
	}
	if !shared.started {
		shared.started = true
		shared.sb, shared.err = startShared()
	}
	if shared.err != nil {
		t.Fatalf("sandbox: %v", shared.err)
	}
	return shared.sb
}

func startShared() (*Sandbox, error) {
	bin := DefaultBinDir(os.Getenv)
	if err := CheckBinaries(bin); err != nil {
		return nil, fmt.Errorf("%w (looked in %s; set DRAINPIPE_SANDBOX_BIN to use another directory)", err, bin)
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	var logger *slog.Logger
	if testing.Verbose() {
		logger = slog.New(slog.NewJSONHandler(os.Stderr, nil))
	}
	shared.opts.BinDir, shared.opts.Logger = bin, logger
	return Start(ctx, shared.opts)
}

// Main runs the tests and then stops the shared sandbox, if one was
// started. When a test failed, the sandbox directory (component logs) is
// kept and its path printed. Use it as the whole of TestMain:
//
//	func TestMain(m *testing.M) { sandbox.Main(m) }
func Main(m *testing.M) { MainWith(m, Options{}) }

// MainWith is Main for a package whose shared sandbox needs options, such
// as EKSAuth (BinDir and Logger are set by ForTest).
func MainWith(m *testing.M, opts Options) {
	shared.mu.Lock()
	shared.main = true
	shared.opts = opts
	shared.mu.Unlock()
	code := m.Run()
	shared.mu.Lock()
	sb := shared.sb
	shared.sb = nil
	shared.mu.Unlock()
	if sb != nil {
		if code != 0 {
			sb.keepDir = true
			fmt.Fprintf(os.Stderr, "sandbox: tests failed; component logs kept in %s\n", sb.LogDir())
		}
		if err := sb.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "sandbox: stopping: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
		if code != 0 { // the logs tell the story; etcd's 60 MB of WAL do not
			_ = os.RemoveAll(filepath.Join(sb.Dir(), "etcd"))
		}
	}
	os.Exit(code)
}

// StartForTest starts a sandbox of the test's own, for a test that needs
// a control plane configured unlike the shared one (see
// Options.APIServerFlags), and stops it when the test ends. Like ForTest
// it skips the test under -short and fails it when the binaries are
// missing. A dedicated start costs seconds: use ForTest where it will do.
func StartForTest(t testing.TB, opts Options) *Sandbox {
	t.Helper()
	if testing.Short() {
		t.Skip("sandbox test: skipped with -short")
	}
	if opts.BinDir == "" {
		opts.BinDir = DefaultBinDir(os.Getenv)
	}
	if err := CheckBinaries(opts.BinDir); err != nil {
		t.Fatalf("sandbox: %v (looked in %s)", err, opts.BinDir)
	}
	if opts.Logger == nil && testing.Verbose() {
		opts.Logger = slog.New(slog.NewJSONHandler(os.Stderr, nil))
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	sb, err := Start(ctx, opts)
	if err != nil {
		t.Fatalf("sandbox: starting: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			sb.keepDir = true
			t.Logf("sandbox: component logs kept in %s", sb.LogDir())
		}
		if err := sb.Stop(); err != nil {
			t.Errorf("sandbox: stopping: %v", err)
		}
	})
	return sb
}
