package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// spotNotice is how long before the interruption AWS sends the warning.
const spotNotice = 2 * time.Minute

func spotWarning(t *testing.T, instanceID string) []byte {
	return freshEvent(t, "eventbridge-spot-interruption.json", forEC2Instance(instanceID, awsfake.Region))
}

func terminateHook(t *testing.T, a awsfake.LifecycleAction) []byte {
	return freshEvent(t, "eventbridge-asg-terminate-lifecycle.json", forLifecycle(a.InstanceID, a.ASG, a.Hook, a.Token, awsfake.Region))
}

// eventTime is an EventBridge event's time.
func eventTime(t *testing.T, body []byte) time.Time {
	t.Helper()
	var ev struct{ Time time.Time }
	if err := json.Unmarshal(body, &ev); err != nil {
		t.Fatalf("decoding event time: %v", err)
	}
	return ev.Time
}

func TestLiveSpotWarningCordonsTaintsAndDrains(t *testing.T) {
	ctx := testContext(t)
	l := startLive(t)
	n := l.node(ctx, served)
	l.k8s.Deployment(ctx, "web", 3, fixture.PinnedTo(n.Name))
	l.k8s.DaemonSet(ctx, "agent")
	warning := spotWarning(t, fixture.InstanceID(n))

	res := l.invoke(ctx, t, time.Minute, message{id: "spot-1", body: warning})

	if diff := cmp.Diff([]string{}, failedIDs(batchResponse(t, res.Body))); diff != "" {
		t.Errorf("batch item failures (-want +got):\n%s", diff)
	}
	l.checkNode(ctx, t, n.Name, true, 0)
	// The drain's own account: finished, and before the instance goes.
	deadline := eventTime(t, warning).Add(spotNotice)
	_, at, ok := logLine(t, l.rt, map[string]string{"msg": "drain stopped", "node": n.Name, "done": "true"})
	switch {
	case !ok:
		t.Errorf("no finished drain logged for %s", n.Name)
	case !at.Before(deadline):
		t.Errorf("drain finished at %s, not before the deadline %s", at, deadline)
	}
}

// A spot warning whose drain a disruption budget blocks until the instance
// goes is acknowledged at the deadline (redelivery cannot help a terminated
// instance), and the budget is never forced.
func TestLiveSpotBlockedUntilDeadlineAcknowledged(t *testing.T) {
	for _, c := range []struct {
		name       string
		env        []string
		wantReason string
		wantPods   int
	}{
		// Default: pods a budget still blocks die with the instance anyway;
		// deleting them at the deadline at least sends SIGTERM in time.
		{"deadline delete", nil, "2 deleted at the deadline despite their budget", 0},
		{"no deadline delete", []string{"DRAINPIPE_DEADLINE_DELETE=false"}, "deadline passed", 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := testContext(t)
			l := startLive(t, c.env...)
			n := l.node(ctx, served)
			l.k8s.Deployment(ctx, "db", 2, fixture.PinnedTo(n.Name))
			l.k8s.PDB(ctx, "db", map[string]string{"app": "db"}, fixture.MinAvailable(2))
			// Sent 1m55s ago: the instance goes in about five seconds.
			late := freshEvent(t, "eventbridge-spot-interruption.json", func(ev map[string]any) {
				forEC2Instance(fixture.InstanceID(n), awsfake.Region)(ev)
				ev["time"] = time.Now().Add(5*time.Second - spotNotice).UTC().Format(time.RFC3339)
			})

			res := l.invoke(ctx, t, time.Minute, message{id: "late-spot", body: late})

			if diff := cmp.Diff([]string{}, failedIDs(batchResponse(t, res.Body))); diff != "" {
				t.Errorf("batch item failures (-want +got):\n%s", diff)
			}
			if got := recordLogs(l.rt)["late-spot"]; got.Outcome != "done" || !strings.Contains(got.Reason, c.wantReason) {
				t.Errorf("record logged as %+v, want done with %q", got, c.wantReason)
			}
			l.checkNode(ctx, t, n.Name, true, c.wantPods)
		})
	}
}

// An instance of a cluster we do not serve (a shared queue) is acknowledged
// and left alone.
func TestLiveForeignClusterIgnored(t *testing.T) {
	ctx := testContext(t)
	l := startLive(t)
	n := l.node(ctx, "someone-elses-cluster")
	l.k8s.Deployment(ctx, "web", 1, fixture.PinnedTo(n.Name))

	res := l.invoke(ctx, t, time.Minute, message{id: "foreign-1", body: spotWarning(t, fixture.InstanceID(n))})

	if diff := cmp.Diff([]string{}, failedIDs(batchResponse(t, res.Body))); diff != "" {
		t.Errorf("batch item failures (-want +got):\n%s", diff)
	}
	if got := recordLogs(l.rt)["foreign-1"]; got.Outcome != "ignored" || got.Reason == "" {
		t.Errorf("record foreign-1 logged as %+v, want ignored with a reason", got)
	}
	l.checkNode(ctx, t, n.Name, false, 1) // the foreign node is left alone
}

// Budget: event received → node cordoned, on a warm function.
func TestLiveBudgetCordonLatency(t *testing.T) {
	budgetsOnly(t)
	ctx := testContext(t)
	l := startLive(t, "DRAINPIPE_ACTION_SPOT=cordon")
	warm, n := l.node(ctx, served), l.node(ctx, served)
	coldStart := time.Now()
	l.invoke(ctx, t, time.Minute, message{id: "warm-up", body: spotWarning(t, fixture.InstanceID(warm))})
	if _, at, ok := logLine(t, l.rt, map[string]string{"msg": "node cordoned", "node": warm.Name}); ok {
		t.Logf("budget: first event -> node cordoned (cold clients), invoke to the drain's log line: %v (for reference)", at.Sub(coldStart))
	}

	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	seen := l.watchCordon(wctx, t, n.Name)
	start := time.Now()
	l.invoke(ctx, t, time.Minute, message{id: "measured", body: spotWarning(t, fixture.InstanceID(n))})
	select {
	case at := <-seen:
		t.Logf("budget: event received -> node cordoned (warm), invoke to watch event: %v (target <= 50ms)", at.Sub(start))
	case <-ctx.Done():
		t.Fatal("node never seen cordoned")
	}
	if _, at, ok := logLine(t, l.rt, map[string]string{"msg": "node cordoned", "node": n.Name}); ok {
		t.Logf("budget: event received -> node cordoned (warm), invoke to the drain's log line: %v", at.Sub(start))
	}
	l.checkNode(ctx, t, n.Name, true, 0)
}
