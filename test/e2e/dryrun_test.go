package e2e

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/lambdart"
)

// dryRunEnv runs the bootstrap in dry run: with an EC2 that knows none of
// the instances, it needs no cluster. The policy is spelled out so outcomes do not hang on
// defaults.
var dryRunEnv = []string{
	"DRAINPIPE_DRY_RUN=true",
	"DRAINPIPE_CLUSTERS=e2e",
	"DRAINPIPE_ACTION_SPOT=cordon-and-drain",
	"DRAINPIPE_ACTION_REBALANCE=cordon",
	"DRAINPIPE_ACTION_STATE_CHANGE=none",
	"DRAINPIPE_MAX_EVENT_AGE=1h",
	"AWS_REGION=us-west-2",
}

// startDryRun starts the bootstrap with dryRunEnv (env entries override
// it) and an EC2 fake: the dry run looks instances up, and the fake knows
// none of them.
func startDryRun(t *testing.T, env ...string) (*lambdart.Runtime, *awsfake.Server) {
	t.Helper()
	fake := awsfake.New()
	t.Cleanup(fake.Close)
	return start(t, append(append(fake.Env(), dryRunEnv...), env...)...), fake
}

// tenRecords is a batch of ten mixing every message shape, two of them
// invalid, with the outcome each must get from startDryRun: the valid
// ones are looked up, and ignored as EC2 does not know their instances.
func tenRecords(t *testing.T) (msgs []message, want map[string]string) {
	spot := freshEvent(t, "eventbridge-spot-interruption.json", forEC2Instance("i-0e2e0000000000001", "us-west-2"))
	msgs = []message{
		{id: "m01-spot", body: spot},
		{id: "m02-rebalance", body: freshEvent(t, "eventbridge-rebalance-recommendation.json", forEC2Instance("i-0e2e0000000000002", "us-west-2"))},
		{id: "m03-stopping", body: freshEvent(t, "eventbridge-state-change-stopping.json", forEC2Instance("i-0e2e0000000000003", "us-west-2"))},
		{id: "m04-asg", body: freshEvent(t, "eventbridge-asg-terminate-lifecycle.json", forLifecycle("i-0e2e0000000000004", "e2e-asg", "e2e-hook", "11111111-2222-3333-4444-555555555555", "us-west-2"))},
		{id: "m05-sns-asg", body: eventBody(t, "sns-asg-lifecycle-terminating.json")},
		{id: "m06-malformed", body: eventBody(t, "bad-malformed-json.json")},
		{id: "m07-bad-instance-id", body: eventBody(t, "bad-instance-id.json")},
		{id: "m08-unknown-detail-type", body: eventBody(t, "eventbridge-unknown-detail-type.json")},
		{id: "m09-asg-test-notification", body: eventBody(t, "asg-test-notification.json")},
		{id: "m10-spot-again", body: spot, receiveCount: 2},
	}
	want = map[string]string{
		"m01-spot": "ignored", "m02-rebalance": "ignored", "m03-stopping": "ignored", "m04-asg": "ignored",
		"m05-sns-asg": "ignored", "m06-malformed": "rejected", "m07-bad-instance-id": "rejected",
		"m08-unknown-detail-type": "ignored", "m09-asg-test-notification": "ignored", "m10-spot-again": "ignored",
	}
	return msgs, want
}

// recordLog is the handler's one summary line per SQS record.
type recordLog struct {
	Outcome string
	Reason  string
	Count   int // lines for the message: must be one
}

func recordLogs(rt *lambdart.Runtime) map[string]recordLog {
	got := map[string]recordLog{}
	for _, rec := range rt.Records() {
		if rec["msg"] != "record handled" {
			continue
		}
		id, _ := rec["message_id"].(string)
		outcome, _ := rec["outcome"].(string)
		reason, _ := rec["reason"].(string)
		got[id] = recordLog{Outcome: outcome, Reason: reason, Count: got[id].Count + 1}
	}
	return got
}

func TestDryRunBatchWithMalformedMessages(t *testing.T) {
	ctx := testContext(t)
	rt, fake := startDryRun(t)
	msgs, want := tenRecords(t)

	res, err := rt.Invoke(ctx, sqsBatch(t, msgs...), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if res.Error != nil {
		t.Fatalf("function error: %+v", res.Error)
	}
	if err := settled(ctx, rt, res); err != nil {
		t.Fatal(err)
	}
	// Rejected messages are not retried (redelivery cannot fix them) and
	// the dry run retries nothing: no record comes back.
	if diff := cmp.Diff([]string{}, failedIDs(batchResponse(t, res.Body))); diff != "" {
		t.Errorf("batch item failures (-want +got):\n%s", diff)
	}
	logs := recordLogs(rt)
	got := map[string]string{}
	for id, l := range logs {
		got[id] = l.Outcome
		if l.Count != 1 {
			t.Errorf("message %s: %d summary lines, want 1", id, l.Count)
		}
		if l.Outcome != "done" && l.Reason == "" {
			t.Errorf("message %s: outcome %s without a reason", id, l.Outcome)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("record outcomes (-want +got):\n%s", diff)
	}
	// The instances the dry run looked up: the two spot messages name
	// the same instance and make one task.
	var looked []string
	for _, c := range fake.CallsTo("DescribeInstances") {
		for k, v := range c.Params {
			if strings.HasPrefix(k, "Filter.1.Value.") {
				looked = append(looked, v...)
			}
		}
	}
	slices.Sort(looked)
	looked = slices.Compact(looked)
	wantLooked := []string{"i-0598c7d356eba48d7", "i-0e2e0000000000001", "i-0e2e0000000000002", "i-0e2e0000000000004"}
	if diff := cmp.Diff(wantLooked, looked); diff != "" {
		t.Errorf("instances the dry run looked up (-want +got):\n%s", diff)
	}
}

func TestInitErrorOnBadConfig(t *testing.T) {
	ctx := testContext(t)
	rt, _ := startDryRun(t, "DRAINPIPE_ACTION_SPOT=bogus")

	_, err := rt.Invoke(ctx, sqsBatch(t, message{id: "m1", body: eventBody(t, "eventbridge-spot-interruption.json")}), 10*time.Second)
	var initErr *lambdart.InitError
	switch {
	case errors.As(err, &initErr):
		t.Logf("init error reported: %+v", initErr.Body)
	case errors.Is(err, lambdart.ErrExited):
	default:
		t.Fatalf("Invoke() error = %v, want an init error or an exit", err)
	}
	state, err := rt.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if state.ExitCode() == 0 {
		t.Errorf("bootstrap exited 0 after a configuration error")
	}
	if !logsContain(rt, "DRAINPIPE_ACTION_SPOT") && (initErr == nil || !strings.Contains(initErr.Body.Message, "DRAINPIPE_ACTION_SPOT")) {
		t.Errorf("neither the logs nor the init error name DRAINPIPE_ACTION_SPOT: %q", rt.Logs())
	}
}
