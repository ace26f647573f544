package chaos_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/test/chaos"
	"github.com/drainpipe/drainpipe/test/lambdart"
	"github.com/drainpipe/drainpipe/test/sandbox"
)

// TestFaults runs every scenario of the fault matrix on a control plane of
// its own and asserts the invariants, never timings. CHAOS_RUN=name,name
// picks scenarios (make chaos prints the table).
func TestFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("fault matrix: sandbox and bootstraps; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Minute)
	defer cancel()
	root, err := lambdart.ModuleRoot(ctx, ".")
	if err != nil {
		t.Fatal(err)
	}
	env := chaos.Env{Bootstrap: filepath.Join(t.TempDir(), "bootstrap"), RBAC: filepath.Join(root, "deploy", "rbac.yaml")}
	if err := (lambdart.Build{Dir: root, Package: "./lambda", Output: env.Bootstrap, Strip: true}).Run(ctx); err != nil {
		t.Fatal(err)
	}
	pick := os.Getenv("CHAOS_RUN")
	for _, sc := range chaos.Scenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			if pick != "" && !strings.Contains(","+pick+",", ","+sc.Name+",") {
				t.Skip("not in CHAOS_RUN")
			}
			sb := sandbox.StartForTest(t, sc.Sandbox)
			e := env
			e.Dir = t.TempDir()
			if testing.Verbose() {
				e.Stdout = t.Output()
			}
			res, err := chaos.Run(ctx, sb, sc, e)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range res.Notes {
				t.Log(n)
			}
			for _, p := range res.Problems {
				t.Error(p)
			}
			if res.Hooks == 0 || res.Drainable == 0 || res.Messages == 0 {
				t.Errorf("empty wave: %+v", res)
			}
		})
	}
}
