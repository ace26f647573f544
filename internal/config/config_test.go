package config

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/policy"
	"github.com/google/go-cmp/cmp"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestLoadDefaults(t *testing.T) {
	got, err := Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Default(), got); diff != "" {
		t.Errorf("Load with nothing set differs from Default (-want +got):\n%s", diff)
	}
	if got.Policy.For(event.KindRebalanceRecommendation) != policy.ActionCordon {
		t.Errorf("default rebalance action = %q, want cordon", got.Policy.For(event.KindRebalanceRecommendation))
	}
}

func TestLoadEverything(t *testing.T) {
	got, err := Load(env(map[string]string{
		"DRAINPIPE_DRY_RUN":                     "true",
		"DRAINPIPE_ACTION_SPOT":                 "cordon",
		"DRAINPIPE_ACTION_REBALANCE":            "none",
		"DRAINPIPE_ACTION_STATE_CHANGE":         "none",
		"DRAINPIPE_ACTION_SCHEDULED_CHANGE":     "cordon",
		"DRAINPIPE_ACTION_ASG_LIFECYCLE":        "none",
		"DRAINPIPE_ACTION_CAPACITY_RESERVATION": "cordon",
		"DRAINPIPE_ACTION_CAPACITY_BLOCK":       "none",
		"DRAINPIPE_KARPENTER_NODES":             "skip",
		"DRAINPIPE_OUT_OF_SERVICE":              "false",
		"DRAINPIPE_REBALANCE_HOLD":              "45m",
		"DRAINPIPE_SWEEP_MARGIN":                "90s",
		"DRAINPIPE_NOTICE_PERIOD":               "40s",
		"DRAINPIPE_POD_GRACE_CAP":               "90s",
		"DRAINPIPE_GROUP_MAX_DRAINING":          "25%",
		"DRAINPIPE_GROUP_LABEL":                 "example.com/pool",
		"DRAINPIPE_GROUP_NAMESPACE":             "ops",
		"DRAINPIPE_GROUP_LEASE_DURATION":        "90s",
		"DRAINPIPE_CLUSTERS":                    "prod, staging,prod,",
		"DRAINPIPE_CLUSTER_ENDPOINTS":           "staging=https://127.0.0.1:6443",
		"DRAINPIPE_REQUIRED_TAG":                "team=platform",
		"DRAINPIPE_MAX_RECEIVE_COUNT":           "3",
		"DRAINPIPE_MAX_EVENT_AGE":               "0",
		"DRAINPIPE_RETRY_DELAY":                 "0",
		"DRAINPIPE_GIVE_WAY_AFTER":              "0",
		"DRAINPIPE_KUBE_QPS":                    "7.5",
		"DRAINPIPE_KUBE_BURST":                  "15",
		"DRAINPIPE_EVICTION_CONCURRENCY":        "4",
		"DRAINPIPE_RECORD_CONCURRENCY":          "2",
		"DRAINPIPE_CLUSTER_EVICTION_RATE":       "0",
		"DRAINPIPE_MAX_CONCURRENCY":             "40",
		"DRAINPIPE_TAINT_EFFECT":                "PreferNoSchedule",
		"DRAINPIPE_DEADLINE_DELETE":             "false",
		"DRAINPIPE_STUCK_POD_TIMEOUT":           "5m",
		"DRAINPIPE_EXCLUDE_FROM_LB":             "false",
		"DRAINPIPE_EVICT_UNMANAGED":             "false",
		"DRAINPIPE_DEADLINE_RESERVE":            "20s",
		"DRAINPIPE_SAFETY_MARGIN":               "1m",
		"DRAINPIPE_KUBECONFIG":                  "/tmp/kubeconfig",
		"DRAINPIPE_LOG_LEVEL":                   "debug",
		"DRAINPIPE_WEBHOOK_SECRET_ARN":          "arn:aws:secretsmanager:eu-west-1:123456789012:secret:drainpipe/webhook-AbCdEf",
		"DRAINPIPE_KUBE_EVENTS":                 "false",
		"DRAINPIPE_METRICS":                     "false",
		"DRAINPIPE_METRICS_STACK":               "Drainpipe-prod",
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		DryRun: true,
		Policy: policy.Policy{
			event.KindSpotInterruption:                policy.ActionCordon,
			event.KindRebalanceRecommendation:         policy.ActionNone,
			event.KindStateChange:                     policy.ActionNone,
			event.KindScheduledChange:                 policy.ActionCordon,
			event.KindASGLifecycle:                    policy.ActionNone,
			event.KindCapacityReservationInterruption: policy.ActionCordon,
			event.KindCapacityBlockExpiry:             policy.ActionNone,
		},
		Return:              Return{SkipKarpenter: true, OutOfService: false, RebalanceHold: 45 * time.Minute, SweepMargin: 90 * time.Second},
		Drains:              Drains{NoticePeriod: 40 * time.Second, GraceCap: 90 * time.Second},
		Groups:              Groups{MaxDrainingPercent: 25, Label: "example.com/pool", Namespace: "ops", LeaseDuration: 90 * time.Second},
		Clusters:            []string{"prod", "staging"},
		ClusterEndpoints:    map[string]string{"staging": "https://127.0.0.1:6443"},
		RequiredTag:         Tag{Key: "team", Value: "platform"},
		MaxReceiveCount:     3,
		MaxEventAge:         0,
		KubeQPS:             7.5,
		KubeBurst:           15,
		EvictionConcurrency: 4,
		RecordConcurrency:   2,
		ClusterEvictionRate: 0,
		MaxConcurrency:      40,
		TaintEffect:         "PreferNoSchedule",
		StuckPodTimeout:     5 * time.Minute,
		DeadlineReserve:     20 * time.Second,
		SafetyMargin:        time.Minute,
		Kubeconfig:          "/tmp/kubeconfig",
		LogLevel:            slog.LevelDebug,
		WebhookSecretARN:    "arn:aws:secretsmanager:eu-west-1:123456789012:secret:drainpipe/webhook-AbCdEf",
		MetricsStack:        "Drainpipe-prod",
		Hooks:               defaultHooks(),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Load (-want +got):\n%s", diff)
	}
}

// A batch gives way after 10 s by default; 0 turns it off, and anything
// but a duration up to the function's longest timeout is refused.
func TestLoadGiveWayAfter(t *testing.T) {
	if c, err := Load(env(nil)); err != nil || c.GiveWayAfter != 10*time.Second {
		t.Errorf("default GiveWayAfter = %s, %v; want 10s", c.GiveWayAfter, err)
	}
	if c, err := Load(env(map[string]string{"DRAINPIPE_GIVE_WAY_AFTER": "30s"})); err != nil || c.GiveWayAfter != 30*time.Second {
		t.Errorf("GiveWayAfter = %s, %v; want 30s", c.GiveWayAfter, err)
	}
	for _, v := range []string{"-1s", "16m", "soon"} {
		_, err := Load(env(map[string]string{"DRAINPIPE_GIVE_WAY_AFTER": v}))
		if err == nil || !strings.Contains(err.Error(), "DRAINPIPE_GIVE_WAY_AFTER") {
			t.Errorf("DRAINPIPE_GIVE_WAY_AFTER=%s: Load error %v, want one naming it", v, err)
		}
	}
}

func TestLoadRefusesNoExecute(t *testing.T) {
	_, err := Load(env(map[string]string{"DRAINPIPE_TAINT_EFFECT": "NoExecute"}))
	if err == nil || !strings.Contains(err.Error(), "DRAINPIPE_TAINT_EFFECT") || !strings.Contains(err.Error(), "PodDisruptionBudgets") {
		t.Errorf("Load(DRAINPIPE_TAINT_EFFECT=NoExecute) error = %v, want a refusal that says why", err)
	}
}

func TestLoadTagKeyOnly(t *testing.T) {
	got, err := Load(env(map[string]string{"DRAINPIPE_REQUIRED_TAG": "kubernetes.io/cluster/prod"}))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Tag{Key: "kubernetes.io/cluster/prod", AnyValue: true}); got.RequiredTag != want {
		t.Errorf("RequiredTag = %+v, want %+v", got.RequiredTag, want)
	}
}

func TestLoadErrors(t *testing.T) {
	tests := map[string]string{
		"DRAINPIPE_DRY_RUN":               "yes please",
		"DRAINPIPE_ACTION_SPOT":           "drain",
		"DRAINPIPE_CLUSTERS":              "prod,-bad",
		"DRAINPIPE_CLUSTER_ENDPOINTS":     "prod",
		"DRAINPIPE_REQUIRED_TAG":          "=value",
		"DRAINPIPE_MAX_RECEIVE_COUNT":     "0",
		"DRAINPIPE_MAX_EVENT_AGE":         "-1h",
		"DRAINPIPE_RETRY_DELAY":           "6m",
		"DRAINPIPE_KUBE_QPS":              "fast",
		"DRAINPIPE_KUBE_BURST":            "-3",
		"DRAINPIPE_EVICTION_CONCURRENCY":  "1.5",
		"DRAINPIPE_RECORD_CONCURRENCY":    "many",
		"DRAINPIPE_CLUSTER_EVICTION_RATE": "-1",
		"DRAINPIPE_TAINT_EFFECT":          "NoWay",
		"DRAINPIPE_EXCLUDE_FROM_LB":       "2",
		"DRAINPIPE_DEADLINE_RESERVE":      "10",
		"DRAINPIPE_LOG_LEVEL":             "loud",
		"DRAINPIPE_WEBHOOK_SECRET_ARN":    "https://hooks.example.test/T000/B000/XXXX",
		"DRAINPIPE_KUBE_EVENTS":           "sometimes",
		"DRAINPIPE_DEADLINE_DELETE":       "maybe",
		"DRAINPIPE_STUCK_POD_TIMEOUT":     "soon",
		"DRAINPIPE_METRICS_STACK":         `my "stack"`,
	}
	for name, value := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := Load(env(map[string]string{name: value}))
			if err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("Load(%s=%q) error = %v, want one naming the variable", name, value, err)
			}
		})
	}
	t.Run("all at once", func(t *testing.T) {
		_, err := Load(env(tests))
		for name := range tests {
			if err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("error %v does not name %s", err, name)
			}
		}
	})
	t.Run("endpoint for unknown cluster", func(t *testing.T) {
		_, err := Load(env(map[string]string{
			"DRAINPIPE_CLUSTERS":          "prod",
			"DRAINPIPE_CLUSTER_ENDPOINTS": "staging=https://127.0.0.1:6443",
		}))
		if err == nil || !strings.Contains(err.Error(), `"staging"`) {
			t.Errorf("error = %v, want one naming the unknown cluster", err)
		}
	})
}

func TestLoadReturnErrors(t *testing.T) {
	_, err := Load(env(map[string]string{
		"DRAINPIPE_KARPENTER_NODES": "maybe",
		"DRAINPIPE_REBALANCE_HOLD":  "13h",
		"DRAINPIPE_OUT_OF_SERVICE":  "sometimes",
		"DRAINPIPE_SWEEP_MARGIN":    "-1m",
	}))
	for _, name := range []string{"DRAINPIPE_KARPENTER_NODES", "DRAINPIPE_REBALANCE_HOLD", "DRAINPIPE_OUT_OF_SERVICE", "DRAINPIPE_SWEEP_MARGIN"} {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("Load error %v does not name %s", err, name)
		}
	}
	c, err := Load(env(nil))
	if err != nil || c.Return != DefaultReturn() {
		t.Errorf("Load(nil).Return = %+v, %v; want %+v", c.Return, err, DefaultReturn())
	}
}

func TestLoadDrainsErrors(t *testing.T) {
	for _, v := range []string{"2h", "-1s", "soon"} {
		_, err := Load(env(map[string]string{"DRAINPIPE_NOTICE_PERIOD": v}))
		if err == nil || !strings.Contains(err.Error(), "DRAINPIPE_NOTICE_PERIOD") {
			t.Errorf("DRAINPIPE_NOTICE_PERIOD=%s: Load error %v, want one naming it", v, err)
		}
	}
	for _, v := range []string{"-1s", "500ms", "soon"} {
		_, err := Load(env(map[string]string{"DRAINPIPE_POD_GRACE_CAP": v}))
		if err == nil || !strings.Contains(err.Error(), "DRAINPIPE_POD_GRACE_CAP") {
			t.Errorf("DRAINPIPE_POD_GRACE_CAP=%s: Load error %v, want one naming it", v, err)
		}
	}
}

func TestLoadGroups(t *testing.T) {
	got, err := Load(env(map[string]string{"DRAINPIPE_GROUP_MAX_DRAINING": "3"}))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Groups{MaxDraining: 3, Namespace: "drainpipe", LeaseDuration: 2 * time.Minute}); got.Groups != want {
		t.Errorf("Groups = %+v, want %+v", got.Groups, want)
	}
	if got, _ := Load(env(nil)); got.Groups.MaxDraining != 0 || got.Groups.MaxDrainingPercent != 0 {
		t.Errorf("default Groups %+v: want the limit off", got.Groups)
	}
	bad := map[string][]string{
		"DRAINPIPE_GROUP_MAX_DRAINING":   {"0", "101", "0%", "150%", "two", "-1", "2.5"},
		"DRAINPIPE_GROUP_LABEL":          {"bad key", "/pool", "example.com/", "-pool"},
		"DRAINPIPE_GROUP_NAMESPACE":      {"Drainpipe", "ops_ns", "-ops"},
		"DRAINPIPE_GROUP_LEASE_DURATION": {"5s", "2h", "soon"},
	}
	for name, values := range bad {
		for _, v := range values {
			_, err := Load(env(map[string]string{name: v}))
			if err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("%s=%s: Load error %v, want one naming it", name, v, err)
			}
		}
	}
}
