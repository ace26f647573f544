package chaos_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/test/chaos"
	"github.com/drainpipe/drainpipe/test/lambdart"
	"github.com/drainpipe/drainpipe/test/sandbox"
)

// TestFaults runs every scenario of the fault matrix, each on a control
// plane of its own, all at once (their time is spent waiting on
// timeouts, not computing), and asserts the invariants, never timings.
// CHAOS_RUN=name,name picks scenarios; make chaos prints the table.
func TestFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("fault matrix: sandboxes and bootstraps; skipped with -short")
	}
	binDir := sandbox.DefaultBinDir(os.Getenv)
	if err := sandbox.CheckBinaries(binDir); err != nil {
		t.Fatalf("sandbox: %v (looked in %s)", err, binDir)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Minute)
	defer cancel()
	root, err := lambdart.ModuleRoot(ctx, ".")
	if err != nil {
		t.Fatal(err)
	}
	env := chaos.Env{Bootstrap: filepath.Join(t.TempDir(), "bootstrap"), RBAC: filepath.Join(root, "deploy", "rbac.yaml")}
	if err := (lambdart.Build{Dir: root, Package: "./lambda", Output: env.Bootstrap, Strip: true}).Run(ctx); err != nil {
		t.Fatal(err)
	}
	var scenarios []chaos.Scenario
	for _, sc := range chaos.Scenarios() {
		if pick := os.Getenv("CHAOS_RUN"); pick == "" || strings.Contains(","+pick+",", ","+sc.Name+",") {
			scenarios = append(scenarios, sc)
		}
	}
	outcomes := make([]outcome, len(scenarios))
	var wg sync.WaitGroup
	for i, sc := range scenarios {
		e := env
		e.Dir = t.TempDir()
		wg.Go(func() { outcomes[i] = runOne(ctx, binDir, sc, e) })
	}
	wg.Wait()
	for i, sc := range scenarios {
		t.Run(sc.Name, func(t *testing.T) { outcomes[i].report(t) })
	}
}

// outcome is one scenario's result, or why the rig could not run it.
type outcome struct {
	res chaos.Result
	err error
}

func runOne(ctx context.Context, binDir string, sc chaos.Scenario, env chaos.Env) outcome {
	var o outcome
	opts := sc.Sandbox
	opts.BinDir = binDir
	sctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	sb, err := sandbox.Start(sctx, opts)
	cancel()
	if err != nil {
		o.err = fmt.Errorf("starting sandbox: %w", err)
		return o
	}
	defer func() {
		if err := sb.Stop(); err != nil && o.err == nil {
			o.err = fmt.Errorf("stopping sandbox: %w", err)
		}
	}()
	o.res, o.err = chaos.Run(ctx, sb, sc, env)
	return o
}

func (o outcome) report(t *testing.T) {
	if o.err != nil {
		t.Fatal(o.err)
	}
	for _, n := range o.res.Notes {
		t.Log(n)
	}
	for _, p := range o.res.Problems {
		t.Error(p)
	}
	if o.res.Hooks == 0 || o.res.Drainable == 0 || o.res.Messages == 0 {
		t.Errorf("empty wave: %+v", o.res)
	}
	if len(o.res.LogTail) > 0 {
		t.Logf("the bootstraps' last lines:\n%s", strings.Join(o.res.LogTail, "\n"))
	}
}
