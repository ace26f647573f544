package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestForgedEnvelopesRejected: the real bootstrap, invoked as Lambda
// invokes it (the function ARN names account 123456789012 and us-west-2),
// rejects envelopes from another account or region, dated in the future,
// or in a shape DRAINPIPE_ACCEPT leaves out, and acts on the genuine one.
func TestForgedEnvelopesRejected(t *testing.T) {
	ctx := testContext(t)
	rt, _ := startDryRun(t, "DRAINPIPE_ACCEPT=eventbridge")
	spot := func(id string, edit func(ev map[string]any)) []byte {
		return freshEvent(t, "eventbridge-spot-interruption.json", func(ev map[string]any) {
			forEC2Instance(id, "us-west-2")(ev)
			if edit != nil {
				edit(ev)
			}
		})
	}
	msgs := []message{
		{id: "genuine", body: spot("i-0e2e00000000000a1", nil)},
		{id: "other-account", body: spot("i-0e2e00000000000a2", func(ev map[string]any) { ev["account"] = "999999999999" })},
		{id: "other-region", body: spot("i-0e2e00000000000a3", func(ev map[string]any) { ev["region"] = "eu-central-1" })},
		{id: "future", body: spot("i-0e2e00000000000a4", func(ev map[string]any) {
			ev["time"] = time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		})},
		{id: "sns", body: eventBody(t, "sns-asg-lifecycle-terminating.json")},
	}
	res, err := rt.Invoke(ctx, sqsBatch(t, msgs...), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := settled(ctx, rt, res); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{}, failedIDs(batchResponse(t, res.Body))); diff != "" {
		t.Errorf("batch item failures (-want +got):\n%s", diff)
	}
	logs := recordLogs(rt)
	for id, want := range map[string]string{
		"genuine":       "ignored:instance not found in EC2", // admitted and looked up
		"other-account": `rejected:account "999999999999"`,
		"other-region":  `rejected:region "eu-central-1"`,
		"future":        "rejected:in the future",
		"sns":           "rejected:shape sns is not accepted",
	} {
		outcome, reason, _ := strings.Cut(want, ":")
		if l := logs[id]; l.Outcome != outcome || !strings.Contains(l.Reason, reason) {
			t.Errorf("message %s: outcome %q reason %q, want %q mentioning %q", id, l.Outcome, l.Reason, outcome, reason)
		}
	}
}
