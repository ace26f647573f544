package config

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// Every bounded setting is accepted exactly at its bound and refused just
// beyond it, and the accepted value is the one read.
func TestSettingBounds(t *testing.T) {
	a := strings.Repeat
	// Qualified label keys: a DNS prefix of 252 or 253 characters, "/", a
	// name of 63.
	label316 := a("a", 63) + "." + a("b", 63) + "." + a("c", 63) + "." + a("d", 60) + "/" + a("e", 63)
	label317 := a("a", 63) + "." + a("b", 63) + "." + a("c", 63) + "." + a("d", 61) + "/" + a("e", 63)
	for _, tc := range []struct {
		name, value string
		want        any // the value read; nil: refused
		got         func(Config) any
	}{
		{"MAX_RECEIVE_COUNT", "1", 1, func(c Config) any { return c.MaxReceiveCount }},
		{"MAX_RECEIVE_COUNT", "0", nil, nil},
		{"STUCK_POD_TIMEOUT", "1ns", time.Nanosecond, func(c Config) any { return c.StuckPodTimeout }},
		{"STUCK_POD_TIMEOUT", "0s", nil, nil},
		{"MAX_EVENT_AGE", "0s", time.Duration(0), func(c Config) any { return c.MaxEventAge }},
		{"MAX_EVENT_AGE", "-1ns", nil, nil},
		{"GIVE_WAY_AFTER", "0s", time.Duration(0), func(c Config) any { return c.GiveWayAfter }},
		{"GIVE_WAY_AFTER", "15m", 15 * time.Minute, func(c Config) any { return c.GiveWayAfter }},
		{"GIVE_WAY_AFTER", "1.4s", time.Second, func(c Config) any { return c.GiveWayAfter }},
		{"GIVE_WAY_AFTER", "15m0.001s", nil, nil},
		{"GIVE_WAY_AFTER", "-1ns", nil, nil},
		{"RETRY_DELAY", "0s", time.Duration(0), func(c Config) any { return c.RetryDelay }},
		{"RETRY_DELAY", "5m", 5 * time.Minute, func(c Config) any { return c.RetryDelay }},
		{"RETRY_DELAY", "5m0.001s", nil, nil},
		{"RETRY_DELAY", "-1ns", nil, nil},
		{"REQUIRED_TAG", a("k", 128) + "=" + a("v", 256), Tag{Key: a("k", 128), Value: a("v", 256)}, func(c Config) any { return c.RequiredTag }},
		{"REQUIRED_TAG", "team", Tag{Key: "team", AnyValue: true}, func(c Config) any { return c.RequiredTag }},
		{"REQUIRED_TAG", a("k", 129), nil, nil},
		{"REQUIRED_TAG", "k=" + a("v", 257), nil, nil},
		{"REQUIRED_TAG", "=v", nil, nil},
		{"KUBE_QPS", "0.5", float32(0.5), func(c Config) any { return c.KubeQPS }},
		{"KUBE_QPS", "0", nil, nil},
		{"GROUP_MAX_DRAINING", "1", 1, func(c Config) any { return c.Groups.MaxDraining }},
		{"GROUP_MAX_DRAINING", "100", 100, func(c Config) any { return c.Groups.MaxDraining }},
		{"GROUP_MAX_DRAINING", "0", nil, nil},
		{"GROUP_MAX_DRAINING", "101", nil, nil},
		{"GROUP_MAX_DRAINING", "1%", 1, func(c Config) any { return c.Groups.MaxDrainingPercent }},
		{"GROUP_MAX_DRAINING", "100%", 100, func(c Config) any { return c.Groups.MaxDrainingPercent }},
		{"GROUP_MAX_DRAINING", "0%", nil, nil},
		{"GROUP_MAX_DRAINING", "101%", nil, nil},
		{"GROUP_LABEL", label316, label316, func(c Config) any { return c.Groups.Label }},
		{"GROUP_LABEL", label317, nil, nil},
		{"GROUP_LEASE_DURATION", "15s", 15 * time.Second, func(c Config) any { return c.Groups.LeaseDuration }},
		{"GROUP_LEASE_DURATION", "1h", time.Hour, func(c Config) any { return c.Groups.LeaseDuration }},
		{"GROUP_LEASE_DURATION", "14.999s", nil, nil},
		{"GROUP_LEASE_DURATION", "1h0m0.001s", nil, nil},
		{"HOOK_RESERVE", "1s", time.Second, func(c Config) any { return c.Hooks.Reserve }},
		{"HOOK_RESERVE", "999ms", nil, nil},
		{"HEARTBEAT_CAP", "1s", time.Second, func(c Config) any { return c.Hooks.HeartbeatCap }},
		{"HEARTBEAT_CAP", "25s", 25 * time.Second, func(c Config) any { return c.Hooks.HeartbeatCap }},
		{"HEARTBEAT_CAP", "999ms", nil, nil},
		{"HEARTBEAT_CAP", "25.001s", nil, nil},
		{"POD_GRACE_CAP", "0s", time.Duration(0), func(c Config) any { return c.Drains.GraceCap }},
		{"POD_GRACE_CAP", "1s", time.Second, func(c Config) any { return c.Drains.GraceCap }},
		{"POD_GRACE_CAP", "999ms", nil, nil},
		{"NOTICE_PERIOD", "1h", time.Hour, func(c Config) any { return c.Drains.NoticePeriod }},
		{"NOTICE_PERIOD", "1h0m1s", nil, nil},
		{"REBALANCE_HOLD", "12h", 12 * time.Hour, func(c Config) any { return c.Return.RebalanceHold }},
		{"REBALANCE_HOLD", "12h0m1s", nil, nil},
		{"SWEEP_MARGIN", "0s", time.Duration(0), func(c Config) any { return c.Return.SweepMargin }},
		{"SWEEP_MARGIN", "-1s", nil, nil},
		{"METRICS_STACK", a("s", 255), a("s", 255), func(c Config) any { return c.MetricsStack }},
		{"METRICS_STACK", "!a~b", "!a~b", func(c Config) any { return c.MetricsStack }},
		{"METRICS_STACK", a("s", 256), nil, nil},
		{"METRICS_STACK", "a b", nil, nil},
		{"METRICS_STACK", "a\x7fb", nil, nil},
		{"METRICS_STACK", `a"b`, nil, nil},
		{"METRICS_STACK", "a'b", nil, nil},
		{"METRICS_STACK", ":ab", nil, nil},
		{"SWEEP_RULE", a("r", 64), a("r", 64), func(c Config) any { return c.SweepRule }},
		{"CORDON_QUEUE_ARN", "arn:aws:sqs:us-east-1:123456789012:drainpipe-cordon", "arn:aws:sqs:us-east-1:123456789012:drainpipe-cordon",
			func(c Config) any { return c.CordonQueueARN }},
		{"CORDON_QUEUE_ARN", "drainpipe-cordon", nil, nil},
		{"CORDON_QUEUE_ARN", "arn:aws:sns:us-east-1:123456789012:drainpipe-cordon", nil, nil},
		{"CORDON_QUEUE_ARN", "arn:aws:sqs:us-east-1:12345:drainpipe-cordon", nil, nil},
		{"SWEEP_RULE", a("r", 65), nil, nil},
		{"SWEEP_RULE", "a/b", nil, nil},
		{"SWEEP_RULE", "arn:aws:events:us-east-1:123456789012:rule/sweep", "arn:aws:events:us-east-1:123456789012:rule/sweep",
			func(c Config) any { return c.SweepRule }},
		{"SWEEP_RULE", "arn:aws:sqs:us-east-1:123456789012:rule/sweep", nil, nil},
		{"SWEEP_RULE", "arn:aws:events:us-east-1:123456789012:bus/sweep", nil, nil},
		{"CLUSTERS", a("c", 100), []string{a("c", 100)}, func(c Config) any { return c.Clusters }},
		{"CLUSTERS", a("c", 101), nil, nil},
		{"ASG_NAMES", a("g", 255), []string{a("g", 255)}, func(c Config) any { return c.Hooks.ASGNames }},
		{"ASG_NAMES", a("g", 256), nil, nil},
	} {
		t.Run(tc.name+"="+abbrev(tc.value), func(t *testing.T) {
			c, err := Load(env(map[string]string{Prefix + tc.name: tc.value}))
			if tc.want == nil {
				if err == nil || !strings.Contains(err.Error(), Prefix+tc.name) {
					t.Errorf("Load = %v, want %s refused", err, tc.name)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if got := tc.got(c); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("read %#v, want %#v", got, tc.want)
			}
		})
	}
}

func abbrev(s string) string {
	if len(s) > 20 {
		return s[:10] + "…" + s[len(s)-5:]
	}
	return s
}
