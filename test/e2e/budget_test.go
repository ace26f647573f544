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
// Outside it they are skipped; when they run they assert what they can
// (the batch succeeded, the node was cordoned), so none only logs.

// budgetsEnv opts in to the budget measurements.
const budgetsEnv = "DRAINPIPE_BUDGETS"

// budgetsOnly skips a measurement unless budgetsEnv is set.
func budgetsOnly(t *testing.T) {
	t.Helper()
	if os.Getenv(budgetsEnv) == "" {
		t.Skipf("measures a budget; set %s=1 (make budgets)", budgetsEnv)
	}
}

func TestBudgetBinarySize(t *testing.T) {
	if testing.Short() || os.Getenv(budgetsEnv) == "" {
		t.Skipf("cross-compiles for linux/arm64; set %s=1 (make budgets)", budgetsEnv)
	}
	bootstrap(t) // fails if lambda/ moved
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
	t.Run("dry run", func(t *testing.T) {
		budgetsOnly(t)
		measureStartToReady(t, dryRunEnv...)
	})
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
	budgetsOnly(t)
	ctx := testContext(t)
	rt, _ := startDryRun(t)
	msgs, want := tenRecords(t)
	invokeOn(ctx, t, rt, 30*time.Second, msgs...)
	checkOutcomes(t, rt, want)
	logRSS(t, rt, "dry run, ten-record batch")
}

func TestLiveBudgetPeakRSS(t *testing.T) {
	budgetsOnly(t)
	ctx := testContext(t)
	l := startLive(t)
	var msgs []message
	want := map[string]string{}
	nodes := l.nodes(ctx, 10, served)
	for i, n := range nodes {
		l.k8s.Deployment(ctx, fmt.Sprintf("web-%d", i), 3, fixture.PinnedTo(n.Name))
		id := fmt.Sprintf("spot-%d", i)
		msgs = append(msgs, message{id: id, body: spotWarning(t, fixture.InstanceID(n))})
		want[id] = "done"
	}
	res := l.invoke(ctx, t, 2*time.Minute, msgs...)
	if got := failedIDs(batchResponse(t, res.Body)); len(got) != 0 {
		t.Errorf("batch item failures %v, want none", got)
	}
	checkOutcomes(t, l.rt, want)
	for _, n := range nodes {
		l.checkNode(ctx, t, n.Name, true, 0)
	}
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

// checkOutcomes fails unless every record was logged once with its wanted
// outcome.
func checkOutcomes(t *testing.T, rt *lambdart.Runtime, want map[string]string) {
	t.Helper()
	got := recordLogs(rt)
	for id, outcome := range want {
		if l := got[id]; l.Outcome != outcome || l.Count != 1 {
			t.Errorf("record %s logged %d times as %q (%s), want once as %q", id, l.Count, l.Outcome, l.Reason, outcome)
		}
	}
}
