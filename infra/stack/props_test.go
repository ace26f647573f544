package stack

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Props)
		want   string // substring of the error; "" for valid
	}{
		{"valid", func(*Props) {}, ""},
		{"missing asset", func(p *Props) { p.AssetDir = "/nonexistent" }, "make build"},
		{"no clusters", func(p *Props) { p.Clusters = nil }, "at least one EKS cluster"},
		{"bad cluster name", func(p *Props) { p.Clusters = []string{"prod/x"} }, `"prod/x" is not a valid EKS cluster name`},
		{"aws-auth cluster not listed", func(p *Props) { p.AWSAuthClusters = []string{"dev"} }, `"dev" is not one of clusters`},
		{"wildcard group name", func(p *Props) { p.ASGNames = []string{"*"} }, "asgNames"},
		{"wildcard in prefix", func(p *Props) { p.ASGNamePrefix = "eks-*" }, "asgNamePrefix"},
		{"unknown action", func(p *Props) { p.Actions.Spot = "drain" }, `actionSpot: "drain" is not one of`},
		{"bad tag", func(p *Props) { p.RequiredTag = "aws:foo" }, "requiredTag"},
		{"env outside namespace", func(p *Props) { p.Env = map[string]string{"HOME": "/"} }, "not a DRAINPIPE_ variable"},
		{"env overriding a prop", func(p *Props) { p.Env = map[string]string{"DRAINPIPE_ACTION_SPOT": "none"} }, "set by the stack"},
		{"env local mode", func(p *Props) { p.Env = map[string]string{"DRAINPIPE_KUBECONFIG": "/k"} }, "local mode"},
		{"memory", func(p *Props) { p.MemoryMB = 64 }, "memorySize"},
		{"timeout too long", func(p *Props) { p.Timeout = 16 * time.Minute }, "timeoutSeconds"},
		{"timeout fraction", func(p *Props) { p.Timeout = 10500 * time.Millisecond }, "timeoutSeconds"},
		{"timeout within the default reserves", func(p *Props) { p.Timeout = 15 * time.Second }, "leaves no time to act after DRAINPIPE_DEADLINE_RESERVE (10s) and DRAINPIPE_HOOK_RESERVE (5s)"},
		{"timeout just above the reserves", func(p *Props) { p.Timeout = 16 * time.Second }, ""},
		{"timeout within raised reserves", func(p *Props) {
			p.Timeout, p.Env = 60*time.Second, map[string]string{"DRAINPIPE_DEADLINE_RESERVE": "40s", "DRAINPIPE_HOOK_RESERVE": "20s"}
		}, "set timeoutSeconds above 60s"},
		{"env overriding the served groups", func(p *Props) { p.Env = map[string]string{"DRAINPIPE_ASG_NAMES": "x"} }, "set by the stack"},
		{"big batch without window", func(p *Props) { p.BatchSize = 11 }, "batchWindowSeconds of at least 1"},
		{"big batch with window", func(p *Props) { p.BatchSize, p.BatchWindow = 100, time.Second }, ""},
		{"concurrency", func(p *Props) { p.MaxConcurrency = 1 }, "maxConcurrency"},
		{"receives", func(p *Props) { p.MaxReceiveCount = 0 }, "maxReceiveCount"},
		{"attempts outlive retention", func(p *Props) { p.Timeout, p.MaxReceiveCount = 15*time.Minute, 100 }, "exceeds the queue retention"},
		{"attempts outlive retention without hastening", func(p *Props) { p.Timeout, p.MaxReceiveCount, p.RetryDelay = 15*time.Minute, 100, 0 }, "exceeds the queue retention"},
		// 1000 × (46 s + 5 min of backoff) is over 4 days, though 1000 × the 276 s visibility is not.
		{"backoff outlives retention", func(p *Props) { p.Timeout, p.MaxReceiveCount = 46*time.Second, 1000 }, "exceeds the queue retention"},
		{"no backoff, same receives", func(p *Props) { p.Timeout, p.MaxReceiveCount, p.RetryDelay = 46*time.Second, 1000, 0 }, ""},
		{"retry delay too long", func(p *Props) { p.RetryDelay = 301 * time.Second }, "retryDelaySeconds"},
		{"retry delay negative", func(p *Props) { p.RetryDelay = -time.Second }, "retryDelaySeconds"},
		{"retry delay fraction", func(p *Props) { p.RetryDelay = 1500 * time.Millisecond }, "retryDelaySeconds"},
		{"retry delay off", func(p *Props) { p.RetryDelay = 0 }, ""},
		{"env overriding the retry delay", func(p *Props) { p.Env = map[string]string{"DRAINPIPE_RETRY_DELAY": "1s"} }, "set by the stack"},
		{"log retention", func(p *Props) { p.LogRetention = 2 }, "logRetentionDays"},
		{"alarm age", func(p *Props) { p.AlarmOldestMessageAge = time.Second }, "alarmOldestMessageAgeSeconds"},
		// CloudWatch looks back a day at most.
		{"alarm age over a day", func(p *Props) { p.AlarmOldestMessageAge = 25 * time.Hour }, "alarmOldestMessageAgeSeconds"},
		{"alarm age a day", func(p *Props) { p.AlarmOldestMessageAge = 24 * time.Hour }, ""},
		{"alarm drain blocked", func(p *Props) { p.AlarmDrainBlocked = 30 * time.Second }, "alarmDrainBlockedSeconds"},
		{"alarm errors", func(p *Props) { p.AlarmErrors = 0 }, "alarmErrors"},
		{"topic not sns", func(p *Props) { p.AlarmTopicARN = "arn:aws:sqs:eu-west-1:123456789012:q" }, "alarmTopicArn"},
		{"topic ok", func(p *Props) { p.AlarmTopicARN = "arn:aws:sns:eu-west-1:123456789012:oncall" }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := testProps(t)
			tt.change(&p)
			checkValidate(t, p, tt.want)
		})
	}
}

func TestValidateReportsAllProblems(t *testing.T) {
	p := Defaults()
	p.AssetDir = t.TempDir()
	p.MemoryMB = 1
	err := p.Validate()
	for _, want := range []string{"make build", "clusters", "memorySize"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to mention %q", err, want)
		}
	}
}

// TestEnvCheckedByTheFunctionsRules: what the function would refuse at
// every start fails synth, with every problem listed at once.
func TestEnvCheckedByTheFunctionsRules(t *testing.T) {
	get := func(key string) any {
		switch key {
		case "clusters":
			return "prod"
		case "memorySize":
			return []any{"big"} // a wrong type, listed with the rest
		case "env":
			return map[string]any{
				"DRAINPIPE_TAINT_EFFECT": "NoExecute",
				"DRAINPIPE_KUBE_QPSS":    "50",
			}
		}
		return nil
	}
	p, ctxErr := FromContext(get)
	p.AssetDir = fakeAsset(t)
	err := errors.Join(ctxErr, p.Validate())
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		"context memorySize",
		"DRAINPIPE_TAINT_EFFECT",
		"DRAINPIPE_KUBE_QPSS is not a Drainpipe setting (did you mean DRAINPIPE_KUBE_QPS?)",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q:\n%v", want, err)
		}
	}
	// A hold the function accepts (at most 12h) but SQS cannot keep: it
	// counts from the receipt, up to a timeout before the cordon.
	p.Env = map[string]string{"DRAINPIPE_REBALANCE_HOLD": "11h58m"}
	p.MemoryMB = 256
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "DRAINPIPE_REBALANCE_HOLD 11h58m0s plus timeoutSeconds") {
		t.Errorf("Validate with an 11h58m hold and a 5m timeout: %v", err)
	}
}
