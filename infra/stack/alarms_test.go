package stack

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
)

// alarmByID returns the alarm whose logical ID starts with id.
func alarmByID(t *testing.T, tpl template, id string) resource {
	t.Helper()
	for lid, r := range tpl.Resources {
		if r.Type == "AWS::CloudWatch::Alarm" && strings.HasPrefix(lid, id) {
			return r
		}
	}
	t.Fatalf("no alarm %s", id)
	return resource{}
}

// canFire reports whether an alarm needing `needed` breaching datapoints
// among `periods` periods of `period` can ever fire on a metric reported
// once per run, runs being `every` apart: the most periods of any window
// that hold a datapoint, over every phase of the runs.
func canFire(needed, periods int, period, every time.Duration) bool {
	window := time.Duration(periods) * period
	for phase := time.Duration(0); phase < every; phase += time.Second {
		held := map[time.Duration]bool{}
		for at := phase; at < window; at += every {
			held[at/period] = true
		}
		if len(held) >= needed {
			return true
		}
	}
	return false
}

// TestAlarmsMeanSomething (issue 25, item 4).
func TestAlarmsMeanSomething(t *testing.T) {
	// The queue alarm pages on messages nobody received. A rebalance hold
	// or a retried drain keeps its record in flight by design (up to 12
	// hours), which SQS counts in ApproximateAgeOfOldestMessage: an alarm
	// on that paged on every hold. In-flight messages are not visible.
	t.Run("unreceived messages, not held ones", func(t *testing.T) {
		p := testProps(t)
		p.AlarmOldestMessageAge = 10*time.Minute + 30*time.Second
		pr := alarmByID(t, synth(t, p), "OldestMessageAlarm").Properties
		got := fmt.Sprintf("%s/%s %s %s %v over %v of %v periods of %vs", pr["Namespace"], pr["MetricName"], pr["Statistic"],
			pr["ComparisonOperator"], pr["Threshold"], number(pr["DatapointsToAlarm"]), number(pr["EvaluationPeriods"]), pr["Period"])
		// Visible in every one-minute sample for the whole (rounded-up) window.
		want := "AWS/SQS/ApproximateNumberOfMessagesVisible Minimum GreaterThanThreshold 0 over 11 of 11 periods of 60s"
		if got != want {
			t.Errorf("OldestMessageAlarm = %s\nwant %s", got, want)
		}
	})
	// The drain alarm is fed once per run of a blocked drain: with three
	// 5-minute periods needed, a run of 450 s or more could never fill
	// them. Every allowed timeout must be able to fire it.
	for _, timeout := range []time.Duration{16 * time.Second, 5 * time.Minute, 450 * time.Second, 10 * time.Minute, 15 * time.Minute} {
		t.Run(fmt.Sprintf("drain blocked, timeout %v", timeout), func(t *testing.T) {
			p := testProps(t)
			p.Timeout, p.MaxReceiveCount = timeout, 3
			p.AlarmDrainBlocked = 20 * time.Minute
			pr := alarmByID(t, synth(t, p), "DrainBlockedAlarm").Properties
			periods := int(number(pr["EvaluationPeriods"]))
			needed := periods
			if v, ok := pr["DatapointsToAlarm"]; ok {
				needed = int(number(v))
			}
			period := time.Duration(number(pr["Period"])) * time.Second
			// A run lasts at most the timeout; the retried record comes back after it.
			if !canFire(needed, periods, period, timeout+p.RetryDelay) {
				t.Errorf("needs %d datapoints in %d periods of %v: a drain reporting every %v never fires it", needed, periods, period, timeout+p.RetryDelay)
			}
			// The stated time is the threshold on how long the drain has been
			// blocked, over all its runs (the function's DrainBlockedFor).
			if pr["MetricName"] != "DrainBlockedFor" || pr["Statistic"] != "Maximum" || number(pr["Threshold"]) != 1200 {
				t.Errorf("DrainBlockedAlarm on %v %v ≥ %v, want DrainBlockedFor Maximum ≥ 1200 (s)", pr["MetricName"], pr["Statistic"], pr["Threshold"])
			}
		})
	}
}

// canFire itself: the old alarm (3 of 3 five-minute periods) cannot fire
// on runs 450 s apart, and can on runs 300 s apart.
func TestCanFire(t *testing.T) {
	if canFire(3, 3, 5*time.Minute, 450*time.Second) || !canFire(3, 3, 5*time.Minute, 300*time.Second) || !canFire(1, 1, 5*time.Minute, 15*time.Minute) {
		t.Error("canFire disagrees with the arithmetic")
	}
}

// TestMetricsStackDimension (issue 25, item 6): the function tags its
// metrics with the stack's name and every alarm and dashboard metric of
// the Drainpipe namespace filters on it, so two stacks in one region do
// not mix.
func TestMetricsStackDimension(t *testing.T) {
	tpl := synth(t, testProps(t))
	env := tpl.byAlias(t, "Function").Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
	if got := tpl.render(env["DRAINPIPE_METRICS_STACK"]); got != "Test" {
		t.Errorf("DRAINPIPE_METRICS_STACK = %q, want the stack's name Test", got)
	}
	for id, r := range tpl.Resources {
		if r.Type != "AWS::CloudWatch::Alarm" || r.Properties["Namespace"] != "Drainpipe" {
			continue
		}
		if got := tpl.render(r.Properties["Dimensions"]); !strings.Contains(got, `{"Name":"stack","Value":"Test"}`) {
			t.Errorf("alarm %s on %s: dimensions %s lack stack=Test", id, r.Properties["MetricName"], got)
		}
	}
	checkValidate(t, func() Props { p := testProps(t); p.Env = map[string]string{"DRAINPIPE_METRICS_STACK": "x"}; return p }(), "set by the stack")

	// Two constructs in one stack: two values. A standalone template: the
	// deployed stack's name.
	app := awscdk.NewApp(nil)
	host := awscdk.NewStack(app, jsii.String("Host"), nil)
	for _, id := range []string{"A", "B"} {
		c, err := NewConstruct(host, id, testProps(t))
		if err != nil {
			t.Fatal(err)
		}
		if got := *c.MetricsStack; got != "Host-"+id {
			t.Errorf("construct %s: MetricsStack = %q, want Host-%s", id, got, id)
		}
	}
	if _, err := NewConstruct(host, "with space", testProps(t)); err == nil || !strings.Contains(err.Error(), "id:") {
		t.Errorf("NewConstruct with id %q: error %v, want one about the id", "with space", err)
	}
}
