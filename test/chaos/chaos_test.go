package chaos_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/test/chaos"
	"github.com/drainpipe/drainpipe/test/fleet"
	"github.com/drainpipe/drainpipe/test/sandbox"
)

// TestFaults runs every scenario of the fault matrix, each on a control
// plane of its own, all at once, and asserts the invariants, never
// timings; the table is logged. CHAOS_RUN=name,name picks scenarios;
// CHAOS_PARALLEL=N runs N at once.
func TestFaults(t *testing.T) {
	ctx, root, bootstrap := fleet.StartTest(t, 15*time.Minute) // skips under -short
	binDir := sandbox.DefaultBinDir(os.Getenv)
	if err := sandbox.CheckBinaries(binDir); err != nil {
		t.Fatalf("sandbox: %v (looked in %s)", err, binDir)
	}
	env := chaos.Env{Bootstrap: bootstrap, RBAC: filepath.Join(root, "deploy", "rbac.yaml"), Dir: t.TempDir()}
	if v := os.Getenv("CHAOS_PARALLEL"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("CHAOS_PARALLEL=%q: want a whole number of scenarios, 1 or more", v)
		}
		env.Parallel = n
	}
	scenarios := chaos.Pick(chaos.Scenarios(), os.Getenv("CHAOS_RUN"))
	outcomes := chaos.RunAll(ctx, binDir, scenarios, env)
	var table strings.Builder
	var results []chaos.Result
	for _, o := range outcomes {
		if o.Err == nil {
			results = append(results, o.Result)
		}
	}
	if err := chaos.PrintTable(&table, results); err != nil {
		t.Fatal(err)
	}
	t.Logf("fault matrix:\n%s", table.String())
	for _, o := range outcomes {
		t.Run(o.Scenario, func(t *testing.T) { report(t, o) })
	}
}

func report(t *testing.T, o chaos.Outcome) {
	if o.Err != nil {
		t.Fatal(o.Err)
	}
	for _, n := range o.Notes {
		t.Log(n)
	}
	for _, p := range o.Problems {
		t.Error(p)
	}
	if o.Hooks == 0 || o.Drainable == 0 || o.Messages == 0 {
		t.Errorf("empty wave: %+v", o.Result)
	}
	if len(o.LogTail) > 0 {
		t.Logf("the bootstraps' last lines:\n%s", strings.Join(o.LogTail, "\n"))
	}
}
