package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/lambdart"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// The budgets are measured and logged, never asserted: timings on a shared
// machine are not facts about the code. `make budgets` prints them all.

// budgetsEnv opts in to the budget measurements that cost a build.
const budgetsEnv = "DRAINPIPE_BUDGETS"

func TestBudgetBinarySize(t *testing.T) {
	if testing.Short() || os.Getenv(budgetsEnv) == "" {
		t.Skipf("cross-compiles for linux/arm64; set %s=1 (make budgets)", budgetsEnv)
	}
	bootstrap(t) // skips while lambda/main.go is missing
	ctx := testContext(t)
	root, err := lambdart.ModuleRoot(ctx, ".")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "bootstrap")
	b := lambdart.Build{Dir: root, Package: "./lambda", Output: out, GOOS: "linux", GOARCH: "arm64", Strip: true}
	if err := b.Run(ctx); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("budget: bootstrap size, linux/arm64 stripped: %.1f MiB (%d bytes; target <= 32 MB)", float64(fi.Size())/(1<<20), fi.Size())
}

func TestBudgetStartToReady(t *testing.T) {
	t.Run("dry run", func(t *testing.T) { measureStartToReady(t, dryRunEnv...) })
	// As deployed: the live actor for EKS (no kubeconfig), its AWS clients
	// pointed at the fakes, which must see no call before the first event.
	t.Run("live EKS mode", func(t *testing.T) {
		fake := awsfake.New()
		t.Cleanup(fake.Close)
		measureStartToReady(t, append(fake.Env(), "DRAINPIPE_CLUSTERS="+served, "AWS_ENDPOINT_URL_STS="+fake.URL())...)
		if calls := fake.Calls(); len(calls) != 0 {
			t.Errorf("AWS calls during init: %+v", calls)
		}
	})
}

func measureStartToReady(t *testing.T, env ...string) {
	const runs = 5
	var took []time.Duration
	for range runs {
		rt := start(t, env...)
		d, err := rt.Ready(testContext(t))
		if err != nil {
			t.Fatal(err)
		}
		took = append(took, d)
		if err := rt.Close(); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(took)
	t.Logf("budget: process start to ready, %s (%d cold starts): min %v, median %v, max %v (target <= 100ms)",
		t.Name(), runs, took[0], took[runs/2], took[runs-1])
}

func TestBudgetPeakRSSDryRun(t *testing.T) {
	ctx := testContext(t)
	rt := start(t, dryRunEnv...)
	msgs, _ := tenRecords(t)
	if _, err := rt.Invoke(ctx, sqsBatch(t, msgs...), 30*time.Second); err != nil {
		t.Fatal(err)
	}
	logRSS(t, rt, "dry run, ten-record batch")
}

func TestLiveBudgetPeakRSS(t *testing.T) {
	ctx := testContext(t)
	l := startLive(t)
	var msgs []message
	for i, n := range l.nodes(ctx, 10, served) {
		l.k8s.Deployment(ctx, fmt.Sprintf("web-%d", i), 3, fixture.PinnedTo(n.Name))
		msgs = append(msgs, message{id: fmt.Sprintf("spot-%d", i), body: spotWarning(t, fixture.InstanceID(n))})
	}
	l.invoke(ctx, t, 2*time.Minute, msgs...)
	logRSS(t, l.rt, "live, ten spot warnings draining 30 pods")
}

func logRSS(t *testing.T, rt *lambdart.Runtime, what string) {
	t.Helper()
	rss, err := rt.PeakRSS()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("budget: peak RSS (VmHWM), %s: %.1f MiB (target <= 128 MB)", what, float64(rss)/(1<<20))
}
