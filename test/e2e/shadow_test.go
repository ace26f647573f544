package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// TestDryRunReadsAndWritesNothing runs the function in dry run as a shadow
// beside another handler: it looks the instance up in EC2 and its node up
// in the cluster, says what it would do to which node, and writes nothing
// (no cordon, no eviction, no heartbeat or completion); an instance of a
// cluster it does not serve is left out of what it says.
func TestDryRunReadsAndWritesNothing(t *testing.T) {
	ctx := testContext(t)
	l := newLive(t)
	spot, hooked := l.node(ctx, served), l.node(ctx, served)
	l.k8s.Deployment(ctx, "web", 2, fixture.PinnedTo(spot.Name))
	l.k8s.Deployment(ctx, "api", 1, fixture.PinnedTo(hooked.Name))
	hook := l.pendingHook(hooked, "7a1e7b9c-0000-4000-8000-0000000000d1")
	// An instance of a cluster the stack does not serve: left out of the
	// shadow's report.
	const elsewhere = "i-0e2e00000000000e1"
	l.aws.AddInstances(awsfake.Instance{ID: elsewhere, Lifecycle: "spot", Tags: map[string]string{"eks:cluster-name": "someone-elses"},
		LaunchTime: time.Now().Add(-time.Hour)})
	l.start(t, "DRAINPIPE_DRY_RUN=true")

	res := l.invoke(ctx, t, time.Minute,
		message{id: "spot", body: spotWarning(t, fixture.InstanceID(spot))},
		message{id: "hook", body: terminateHook(t, hook)},
		message{id: "elsewhere", body: spotWarning(t, elsewhere)})

	if got := failedIDs(batchResponse(t, res.Body)); len(got) != 0 {
		t.Errorf("batch item failures %v, want none", got)
	}
	if n := len(l.aws.CallsTo("DescribeInstances")); n == 0 {
		t.Error("the dry run did not look the instances up in EC2")
	}
	for _, call := range []string{"CompleteLifecycleAction", "RecordLifecycleActionHeartbeat"} {
		if calls := l.aws.CallsTo(call); len(calls) != 0 {
			t.Errorf("the dry run called %s: %+v", call, calls)
		}
	}
	l.checkNode(ctx, t, spot.Name, false, 2)
	l.checkNode(ctx, t, hooked.Name, false, 1)
	if l := recordLogs(l.rt)["elsewhere"]; l.Outcome != "ignored" {
		t.Errorf("the other cluster's instance: outcome %q (%s), want ignored", l.Outcome, l.Reason)
	}
	got := map[string]string{}
	for _, rec := range l.rt.Records() {
		if msg, _ := rec["msg"].(string); strings.HasPrefix(msg, "dry run: would") && (rec["instance_id"] == elsewhere || rec["cluster"] != nil && rec["cluster"] != served) {
			t.Errorf("a dry-run line for a cluster the stack does not serve: %v", rec)
		}
		if node, ok := rec["node"].(string); ok && rec["cluster"] == served {
			if msg, _ := rec["msg"].(string); strings.HasPrefix(msg, "dry run: would") {
				got[node] = msg
			}
		}
	}
	want := map[string]string{
		spot.Name:   fmt.Sprintf("dry run: would cordon and drain node %s of cluster %s", spot.Name, served),
		hooked.Name: fmt.Sprintf("dry run: would cordon and drain node %s of cluster %s", hooked.Name, served),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("what the dry run says it would do, by node (-want +got):\n%s", diff)
	}
	if !slices.ContainsFunc(l.rt.Records(), func(r map[string]any) bool {
		return r["msg"] == "dry run: would complete lifecycle hook" && r["node"] == hooked.Name && r["hook"] == hook.Hook
	}) {
		t.Errorf("the dry run does not say it would complete hook %s after node %s", hook.Hook, hooked.Name)
	}
}
