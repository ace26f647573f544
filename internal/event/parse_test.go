package event

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestParseTestdata parses every payload in testdata, written from AWS's
// documented examples, and checks the whole result.
func TestParseTestdata(t *testing.T) {
	spot := Interruption{
		Kind: KindSpotInterruption, Instances: []string{"i-1234567890abcdef0"},
		EventID: "12345678-1234-1234-1234-123456789012",
		Time:    mustTime(t, "2026-11-20T10:00:00Z"), Deadline: mustTime(t, "2026-11-20T10:02:00Z"),
		Account: "123456789012", Region: "us-east-2",
		InstanceAction: "terminate",
		Summary:        "spot interruption warning, instance-action terminate",
	}
	retirement := Interruption{
		Kind:      KindScheduledChange,
		Instances: []string{"i-0aaaa1111bbbb2222", "i-0cccc3333dddd4444", "i-12345678"},
		EventID:   "arn:aws:health:us-east-1::event/EC2/AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED/AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED_ABC123-DEF456",
		Time:      mustTime(t, "2026-11-06T06:27:57Z"), Deadline: mustTime(t, "2026-11-20T15:10:09Z"),
		// The notice's window: the sweep holds the node until it closes.
		End:     mustTime(t, "2026-11-20T17:10:09Z"),
		Account: "123456789012", Region: "us-east-1", ScheduledCode: "instance-retirement",
		Summary: "AWS Health scheduled change AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED",
	}
	// A closed notice restores the nodes cordoned for the same notice ARN;
	// it has no deadline (its start is past, and would age it out).
	closed := retirement
	closed.Time, closed.Deadline, closed.End, closed.Restore = mustTime(t, "2026-11-20T18:00:00Z"), time.Time{}, time.Time{}, true
	closed.Summary = "AWS Health notice closed AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED: nodes cordoned for it come back"
	twoOfThree := retirement
	twoOfThree.Instances = []string{"i-0aaaa1111bbbb2222", "i-0cccc3333dddd4444"}
	twoOfThree.Skipped = []string{`malformed instance ID "i-NOTHEX" (entity 1)`, "entity 2 is not an object with a string entityValue"}
	twoOfThree.Summary += "; 2 malformed entities skipped: " + strings.Join(twoOfThree.Skipped, "; ")
	maintenance := retirement
	maintenance.Instances = []string{"i-0aaaa1111bbbb2222"}
	maintenance.ScheduledCode = "" // not an EC2 scheduled event code
	maintenance.EventID = "arn:aws:health:us-east-1::event/EC2/AWS_EC2_INSTANCE_NETWORK_MAINTENANCE_SCHEDULED/AWS_EC2_INSTANCE_NETWORK_MAINTENANCE_SCHEDULED_XYZ789"
	maintenance.CordonOnly = `AWS Health code "AWS_EC2_INSTANCE_NETWORK_MAINTENANCE_SCHEDULED" costs the instance its network connectivity for a while, not the instance`
	maintenance.Summary = "AWS Health scheduled change AWS_EC2_INSTANCE_NETWORK_MAINTENANCE_SCHEDULED (cordon at most: " + maintenance.CordonOnly + ")"
	// Power maintenance reboots the instance: the configured action.
	power := maintenance
	power.EventID = "arn:aws:health:us-east-1::event/EC2/AWS_EC2_INSTANCE_POWER_MAINTENANCE_SCHEDULED/AWS_EC2_INSTANCE_POWER_MAINTENANCE_SCHEDULED_PWR123"
	power.CordonOnly = ""
	power.Summary = "AWS Health scheduled change AWS_EC2_INSTANCE_POWER_MAINTENANCE_SCHEDULED"
	directHook := Interruption{
		Kind: KindASGLifecycle, Instances: []string{"i-0598c7d356eba48d7"},
		EventID: "1ab3c5d7-2e4f-4a6b-8c0d-1e2f3a4b5c6d",
		Time:    mustTime(t, "2026-11-20T10:15:16.524Z"), Account: "123456789012",
		Lifecycle: &Lifecycle{
			ASG: "my-asg", Hook: "my-termination-hook", Token: "71514b9d-6a40-4b26-8523-05e7eEXAMPLE",
			Transition: TransitionTerminating, InstanceID: "i-0598c7d356eba48d7",
			Origin: "AutoScalingGroup", Destination: "EC2",
		},
		Summary: "Auto Scaling terminate lifecycle action",
	}
	tests := []struct {
		file       string
		want       []Interruption
		wantIgnore string // substring of the ignore reason
		wantReject string // substring of the rejection
	}{
		{file: "eventbridge-spot-interruption.json", want: []Interruption{spot}},
		{file: "sns-eventbridge-spot-interruption.json", want: []Interruption{spot}},
		{file: "eventbridge-rebalance-recommendation.json", want: []Interruption{{
			Kind: KindRebalanceRecommendation, Instances: []string{"i-1234567890abcdef0"},
			EventID: "12345678-1234-1234-1234-123456789013", Time: mustTime(t, "2026-11-20T09:58:00Z"),
			Account: "123456789012", Region: "us-east-2", Summary: "rebalance recommendation",
		}}},
		{file: "eventbridge-state-change-stopping.json", want: []Interruption{{
			Kind: KindStateChange, Instances: []string{"i-0abcd1111abcd1111"},
			EventID: "7bf73129-1428-4cd3-a780-95db273d1602", Time: mustTime(t, "2026-11-20T10:05:54Z"),
			Account: "123456789012", Region: "us-east-1", State: "stopping", Summary: "instance state stopping",
			Deadline: mustTime(t, "2026-11-20T10:07:54Z"),
		}}},
		{file: "eventbridge-state-change-pending.json", want: []Interruption{{
			Kind: KindStateChange, Instances: []string{"i-abcd1111"},
			EventID: "7bf73129-1428-4cd3-a780-95db273d1603", Time: mustTime(t, "2026-11-20T10:06:54Z"),
			Account: "123456789012", Region: "us-east-1", State: "pending", Restore: true,
			Summary: "instance state pending: a node cordoned for its stop comes back",
		}}},
		{file: "eventbridge-state-change-running.json", want: []Interruption{{
			Kind: KindStateChange, Instances: []string{"i-0abcd1111abcd1111"},
			EventID: "7bf73129-1428-4cd3-a780-95db273d1604", Time: mustTime(t, "2026-11-20T10:09:54Z"),
			Account: "123456789012", Region: "us-east-1", State: "running", Restore: true,
			Summary: "instance state running: a node cordoned for its stop comes back",
		}}},
		{file: "eventbridge-spot-hibernate.json", want: []Interruption{{
			Kind: KindSpotInterruption, Instances: []string{"i-1234567890abcdef1"},
			EventID: "12345678-1234-1234-1234-123456789014",
			// Hibernation begins at once: the deadline is the event time.
			Time: mustTime(t, "2026-11-20T10:00:00Z"), Deadline: mustTime(t, "2026-11-20T10:00:00Z"),
			Account: "123456789012", Region: "us-east-2", InstanceAction: "hibernate",
			Summary: "spot interruption warning, instance-action hibernate",
		}}},
		{file: "eventbridge-capacity-reservation-interruption.json", want: []Interruption{{
			Kind: KindCapacityReservationInterruption, Instances: []string{"i-0123456789abcdef2"},
			EventID: "12345678-1234-1234-1234-123456789030",
			Time:    mustTime(t, "2026-11-20T11:00:00Z"), Deadline: mustTime(t, "2026-11-20T11:02:00Z"),
			Account: "123456789012", Region: "us-west-2", InstanceAction: "terminate",
			Summary: "capacity reservation interruption warning, instance-action terminate",
		}}},
		{file: "eventbridge-capacity-block-expiry.json", want: []Interruption{{
			Kind: KindCapacityBlockExpiry, Reservation: "cr-0123456789abcdef0",
			EventID: "12345678-1234-1234-1234-123456789040",
			// EC2 begins terminating the block's instances 30 minutes before its end.
			Time: mustTime(t, "2026-11-20T11:20:00Z"), Deadline: mustTime(t, "2026-11-20T11:30:00Z"),
			// The block's end is kept: EC2 may terminate until then.
			End:     mustTime(t, "2026-11-20T12:00:00Z"),
			Account: "123456789012", Region: "us-east-2",
			Summary: "capacity block cr-0123456789abcdef0 expires 2026-11-20T12:00:00Z",
		}}},
		{file: "eventbridge-scheduled-sweep.json", want: []Interruption{{
			Kind: KindSweep, EventID: "89d1a02d-5ec7-412e-82f5-13505f849b41", Time: mustTime(t, "2026-11-20T10:05:00Z"),
			Account: "123456789012", Region: "us-east-2", Rule: "arn:aws:events:us-east-2:123456789012:rule/drainpipe-sweep",
			Summary: "sweep scheduled by arn:aws:events:us-east-2:123456789012:rule/drainpipe-sweep",
		}}},
		{file: "eventbridge-health-scheduled-change.json", want: []Interruption{retirement}},
		{file: "eventbridge-health-resources-only.json", want: []Interruption{retirement}},
		{file: "eventbridge-health-closed.json", want: []Interruption{closed}},
		{file: "eventbridge-health-one-bad-entity.json", want: []Interruption{twoOfThree}},
		{file: "eventbridge-health-network-maintenance.json", want: []Interruption{maintenance}},
		{file: "eventbridge-health-power-maintenance.json", want: []Interruption{power}},
		{file: "eventbridge-health-issue.json", wantIgnore: `category "issue"`},
		{file: "eventbridge-asg-terminate-lifecycle.json", want: []Interruption{{
			Kind: KindASGLifecycle, Instances: []string{"i-0fedcba9876543210"},
			EventID: "12345678-1234-1234-1234-123456789020", Time: mustTime(t, "2026-11-20T10:10:00Z"),
			Account: "123456789012", Region: "us-west-2",
			Lifecycle: &Lifecycle{
				ASG: "my-asg", Hook: "my-lifecycle-hook", Token: "87654321-4321-4321-4321-210987654321",
				Transition: TransitionTerminating, InstanceID: "i-0fedcba9876543210",
			},
			Summary: "Auto Scaling terminate lifecycle action",
		}}},
		{file: "eventbridge-asg-launch-lifecycle.json", want: []Interruption{{
			Kind: KindASGLaunchLifecycle, Instances: []string{"i-0123456789abcdef1"},
			EventID: "12345678-1234-1234-1234-123456789021", Time: mustTime(t, "2026-11-20T10:11:00Z"),
			Account: "123456789012", Region: "us-west-2",
			Lifecycle: &Lifecycle{
				ASG: "my-asg", Hook: "my-launch-hook", Token: "87654321-4321-4321-4321-210987654322",
				Transition: TransitionLaunching, InstanceID: "i-0123456789abcdef1",
			},
			Summary: "Auto Scaling launch lifecycle action",
		}}},
		// AWS's warm-pool example: a new instance launched into the pool.
		{file: "eventbridge-asg-launch-warm-pool.json", want: []Interruption{{
			Kind: KindASGLaunchLifecycle, Instances: []string{"i-1234567890abcdef0"},
			EventID: "12345678-1234-1234-1234-123456789012", Time: mustTime(t, "2026-11-20T00:12:37.214Z"),
			Account: "123456789012", Region: "us-west-2",
			Lifecycle: &Lifecycle{
				ASG: "my-asg", Hook: "my-launch-lifecycle-hook", Token: "71514b9d-6a40-4b26-8523-05e7eEXAMPLE",
				Transition: TransitionLaunching, InstanceID: "i-1234567890abcdef0", Origin: "EC2", Destination: "WarmPool",
			},
			Summary: "Auto Scaling launch lifecycle action into the warm pool (completed at once: no node to wait for)",
		}}},
		{file: "asg-lifecycle-launching.json", want: []Interruption{{
			Kind: KindASGLaunchLifecycle, Instances: []string{"i-0598c7d356eba48d8"},
			EventID: "3cd5e7f9-4a6b-4c8d-8e0f-2a3b4c5d6e7f", Time: mustTime(t, "2026-11-20T10:12:16.524Z"),
			Account: "123456789012",
			Lifecycle: &Lifecycle{
				ASG: "my-asg", Hook: "my-launch-hook", Token: "71514b9d-6a40-4b26-8523-05e7eEXAMPLF",
				Transition: TransitionLaunching, InstanceID: "i-0598c7d356eba48d8",
				Origin: "EC2", Destination: "AutoScalingGroup",
			},
			Summary: "Auto Scaling launch lifecycle action",
		}}},
		{file: "eventbridge-unknown-detail-type.json", wantIgnore: `detail-type "EC2 Instance Launch Successful"`},
		{file: "asg-lifecycle-terminating.json", want: []Interruption{directHook}},
		{file: "sns-asg-lifecycle-terminating.json", want: []Interruption{directHook}},
		{file: "asg-test-notification.json", wantIgnore: "autoscaling:TEST_NOTIFICATION"},
		{file: "bad-malformed-json.json", wantReject: "decoding message"},
		{file: "bad-instance-id.json", wantReject: `malformed instance ID "i-1234567890ABCDEF0"`},
		{file: "bad-wrong-source.json", wantReject: `must come from source "aws.ec2"`},
		{file: "bad-lifecycle-missing-token.json", wantReject: "missing lifecycle action token"},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		seen[tt.file] = true
		t.Run(tt.file, func(t *testing.T) {
			got, err := Parse(readTestdata(t, tt.file))
			checkParse(t, got, err, tt.want, tt.wantIgnore, tt.wantReject)
		})
	}
	// Every payload in testdata has a case here.
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, f := range files {
		if !seen[filepath.Base(f)] {
			t.Errorf("testdata/%s has no test case", filepath.Base(f))
		}
	}
}

func checkParse(t *testing.T, got Parsed, err error, want []Interruption, wantIgnore, wantReject string) {
	t.Helper()
	if wantReject != "" {
		if !errors.Is(err, ErrRejected) {
			t.Fatalf("Parse error = %v, want a rejection", err)
		}
		if !strings.Contains(err.Error(), wantReject) {
			t.Errorf("rejection %q does not mention %q", err, wantReject)
		}
		return
	}
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if wantIgnore != "" {
		if len(got.Interruptions) != 0 || !strings.Contains(got.IgnoreReason, wantIgnore) {
			t.Errorf("Parse = %+v, want ignored with a reason mentioning %q", got, wantIgnore)
		}
		return
	}
	if got.IgnoreReason != "" {
		t.Errorf("IgnoreReason = %q, want none", got.IgnoreReason)
	}
	if diff := cmp.Diff(want, got.Interruptions); diff != "" {
		t.Errorf("interruptions (-want +got):\n%s", diff)
	}
}
