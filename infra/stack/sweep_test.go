package stack

import (
	"slices"
	"strings"
	"testing"
)

// sweepRule returns the logical ID and schedule of the template's schedule
// rule ("" when there is none) and aliases it as SweepRule, so what refers
// to it renders as ${SweepRule.Arn}.
func sweepRule(t *testing.T, tpl template) (id, schedule string) {
	t.Helper()
	for rid, r := range tpl.Resources {
		if s, ok := r.Properties["ScheduleExpression"].(string); ok && r.Type == "AWS::Events::Rule" {
			if id != "" {
				t.Fatalf("two schedule rules: %s and %s", id, rid)
			}
			id, schedule = rid, s
			tpl.alias[rid] = "SweepRule"
		}
	}
	return id, schedule
}

// TestSweepWiring (issue 23): the schedule rule feeds the stack's queue,
// the queue lets it send, the function knows its ARN and may call
// DescribeInstanceStatus, and SweepRepairs has an alarm; sweepInterval 0
// leaves all of it out.
func TestSweepWiring(t *testing.T) {
	for _, tt := range []struct {
		interval int
		schedule string // "" when the sweep is off
	}{
		{5, "rate(5 minutes)"},
		{1, "rate(1 minute)"},
		{1440, "rate(1440 minutes)"},
		{0, ""},
	} {
		t.Run(tt.schedule, func(t *testing.T) {
			p := testProps(t)
			p.SweepInterval = tt.interval
			tpl := synth(t, p)
			id, schedule := sweepRule(t, tpl)
			if schedule != tt.schedule {
				t.Fatalf("schedule = %q, want %q", schedule, tt.schedule)
			}
			on := tt.schedule != ""

			if on {
				targets := asList(tpl.Resources[id].Properties["Targets"])
				if len(targets) != 1 {
					t.Fatalf("sweep rule has %d targets, want 1", len(targets))
				}
				target := targets[0].(map[string]any)
				dl, _ := target["DeadLetterConfig"].(map[string]any)
				if got := tpl.render(target["Arn"]) + " " + tpl.render(dl["Arn"]); got != "${Queue.Arn} ${DeadLetterQueue.Arn}" {
					t.Errorf("sweep rule target and dead letter = %s, want the queue and the dead-letter queue", got)
				}
			}

			// The queue allows the rule, and its deny of other senders
			// exempts it (the condition lists every rule's ARN).
			var allowed, exempt bool
			for _, s := range tpl.statements() {
				if s.Where != "QueuePolicy(${Queue})" || !slices.Contains(s.Actions, "sqs:SendMessage") {
					continue
				}
				switch {
				case s.Effect == "Allow" && s.Principal == `{"Service":"events.amazonaws.com"}` &&
					strings.Contains(s.Condition, `"${SweepRule.Arn}"`):
					allowed = true
				case s.Effect == "Deny" && strings.Contains(s.Condition, "${SweepRule.Arn}"):
					exempt = true
				}
			}
			if allowed != on || exempt != on {
				t.Errorf("queue policy allows the sweep rule: %v, exempts it from the deny: %v; want %v", allowed, exempt, on)
			}

			vars, _ := tpl.byAlias(t, "Function").Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
			env, set := vars["DRAINPIPE_SWEEP_RULE"]
			if want := "${SweepRule.Arn}"; on && tpl.render(env) != want || !on && set {
				t.Errorf("DRAINPIPE_SWEEP_RULE = %s (set %v), want %s when on, unset when off", tpl.render(env), set, want)
			}

			var describe []string
			for _, s := range tpl.statements() {
				if s.Where == "Policy(${FunctionRole})" && slices.Contains(s.Actions, "ec2:DescribeInstances") {
					describe = s.Actions
					if !strings.Contains(s.Condition, "aws:RequestedRegion") {
						t.Errorf("describe statement condition = %s, want the region pinned", s.Condition)
					}
				}
			}
			if got := slices.Contains(describe, "ec2:DescribeInstanceStatus"); got != on {
				t.Errorf("function may DescribeInstanceStatus: %v (actions %v), want %v", got, describe, on)
			}

			var alarms int
			for _, a := range tpl.ofType("AWS::CloudWatch::Alarm") {
				pr := a.Properties
				if pr["MetricName"] != "SweepRepairs" {
					continue
				}
				alarms++
				if pr["Namespace"] != metricsNamespace || pr["Statistic"] != "Sum" || number(pr["Period"]) != 300 ||
					pr["ComparisonOperator"] != "GreaterThanThreshold" || number(pr["Threshold"]) != 0 || pr["TreatMissingData"] != "notBreaching" {
					t.Errorf("SweepRepairs alarm = %v", pr)
				}
				if got := tpl.render(pr["AlarmActions"]) + " " + tpl.render(pr["OKActions"]); got != "${Topic} ${Topic}" {
					t.Errorf("SweepRepairs alarm and OK actions = %s, want the alarm topic", got)
				}
			}
			if want := map[bool]int{true: 1, false: 0}[on]; alarms != want {
				t.Errorf("%d SweepRepairs alarms, want %d", alarms, want)
			}
		})
	}
}

func TestSweepIntervalValidated(t *testing.T) {
	for _, tt := range []struct {
		value any
		bad   bool
	}{
		{"0", false}, {float64(1440), false}, {"7", false},
		{float64(-1), true}, {"1441", true}, {1.5, true}, {"soon", true},
	} {
		p, err := FromContext(func(k string) any {
			if k == "sweepInterval" {
				return tt.value
			}
			return nil
		})
		if err == nil {
			p.AssetDir, p.Clusters = fakeAsset(t), []string{"prod"}
			err = p.Validate()
		}
		if (err != nil) != tt.bad {
			t.Errorf("sweepInterval %v: error %v, want error %v", tt.value, err, tt.bad)
		} else if err != nil && !strings.Contains(err.Error(), "sweepInterval") {
			t.Errorf("sweepInterval %v: error %q does not name the key", tt.value, err)
		}
	}
	if got := Defaults().SweepInterval; got != 5 {
		t.Errorf("default sweepInterval = %d, want 5", got)
	}
}
