package main

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func nthRun(t *testing.T, file string) nthResult {
	t.Helper()
	code, out, stderr := runCLI(t, nil, "", "nth-values", file)
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	var res nthResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("output %s: %v", out, err)
	}
	return res
}

func gapsOf(res nthResult) map[string]string {
	out := map[string]string{}
	for _, g := range res.NotCarried {
		out[g.Value] = g.Why
	}
	return out
}

// TestNTHValuesChartDefaults: NTH's chart defaults, in queue-processor mode,
// become the context that makes Drainpipe behave alike: drain on a
// rebalance recommendation, the managed tag required, no load-balancer
// exclusion, no out-of-service taint, no Kubernetes events. What cannot
// be matched is listed.
func TestNTHValuesChartDefaults(t *testing.T) {
	res := nthRun(t, filepath.Join("testdata", "nth-values-defaults.yaml"))
	want := map[string]any{
		"actionRebalance": "cordon-and-drain",
		"requiredTag":     "aws-node-termination-handler/managed",
		"env": map[string]any{
			"DRAINPIPE_EXCLUDE_FROM_LB": "false", "DRAINPIPE_KUBE_EVENTS": "false", "DRAINPIPE_OUT_OF_SERVICE": "false",
		},
	}
	if diff := cmp.Diff(want, res.Context); diff != "" {
		t.Errorf("context (-want +got):\n%s", diff)
	}
	// Only what Drainpipe cannot match: the pod's and IMDS mode's values
	// are at their defaults, so they change nothing.
	wantGaps := []string{"deleteSqsMsgIfNodeNotFound", "queueURL", "taintNode"}
	if diff := cmp.Diff(wantGaps, slices.Sorted(maps.Keys(gapsOf(res)))); diff != "" {
		t.Errorf("not carried (-want +got):\n%s", diff)
	}
	if len(res.Unknown) != 0 {
		t.Errorf("unknown values %v: the chart's own file must be known", res.Unknown)
	}
}

// TestNTHValuesOverrides: values a release commonly sets.
func TestNTHValuesOverrides(t *testing.T) {
	file := filepath.Join(t.TempDir(), "values.yaml")
	values := `enableSqsTerminationDraining: true
cordonOnly: true
taintNode: true
excludeFromLoadBalancers: true
emitKubernetesEvents: true
enableOutOfServiceTaint: true
checkTagBeforeDraining: false
dryRun: true
workers: 20
logLevel: debug
podTerminationGracePeriod: 30
completeLifecycleActionDelaySeconds: 60
webhookURL: https://hooks.slack.com/services/T/B/X
webhookTemplate: '{"text":"{{ .EventID }}"}'
webhookHeaders: '{"X-Team":"platform"}'
enableRebalanceDraining: true
replicas: 2
replicaCount: 2
`
	if err := os.WriteFile(file, []byte(values), 0o600); err != nil {
		t.Fatal(err)
	}
	res := nthRun(t, file)
	want := map[string]any{"dryRun": true, "env": map[string]any{"DRAINPIPE_RECORD_CONCURRENCY": "20", "DRAINPIPE_LOG_LEVEL": "debug",
		"DRAINPIPE_POD_GRACE_CAP": "30s", "DRAINPIPE_WEBHOOK_TEMPLATE": `{"text":"{{ .EventID }}"}`,
		"DRAINPIPE_WEBHOOK_HEADERS": `{"X-Team":"platform"}`}}
	for _, a := range drainpipeActions {
		want[a] = "cordon"
	}
	if diff := cmp.Diff(want, res.Context); diff != "" {
		t.Errorf("context (-want +got):\n%s", diff)
	}
	gaps := gapsOf(res)
	for _, v := range []string{"completeLifecycleActionDelaySeconds", "webhookURL", "enableRebalanceDraining", "replicas"} {
		if gaps[v] == "" {
			t.Errorf("%s not listed as not carried", v)
		}
	}
	if !strings.Contains(gaps["enableRebalanceDraining"], "IMDS") || !strings.Contains(gaps["webhookURL"], "webhookSecretArn") {
		t.Errorf("reasons: %v", gaps)
	}
	if diff := cmp.Diff([]string{"replicaCount"}, res.Unknown); diff != "" {
		t.Errorf("unknown (-want +got):\n%s", diff)
	}
}

func TestNTHValuesUsage(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("a: [unclosed"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"nth-values"}, {"nth-values", "a.yaml", "b.yaml"}, {"nth-values", bad},
		{"nth-values", filepath.Join(t.TempDir(), "missing.yaml")}} {
		if code, out, _ := runCLI(t, nil, "", args...); code != exitUsage || out != "" {
			t.Errorf("%v: exit %d, stdout %q; want %d and nothing", args, code, out, exitUsage)
		}
	}
}

// TestNTHValuesKnowsTheChart: every value of the chart has a rule.
func TestNTHValuesKnowsTheChart(t *testing.T) {
	rules := nthRules()
	defaults, err := nthDefaults()
	if err != nil {
		t.Fatal(err)
	}
	for k := range defaults {
		if rules[k] == nil {
			t.Errorf("value %s has no rule", k)
		}
	}
	for k := range rules {
		if _, ok := defaults[k]; !ok {
			t.Errorf("rule for %s, which is not a value of the chart", k)
		}
	}
}

// A value of the wrong type is refused, every one listed at once, instead
// of being read as false.
func TestNTHValuesRefusesMistypedValues(t *testing.T) {
	f := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(f, []byte("cordonOnly: \"yes please\"\nworkers: many\ndryRun: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLI(t, nil, "", "nth-values", f)
	if code != exitUsage || out != "" || !strings.Contains(stderr, "cordonOnly: yes please is a string, want a boolean") ||
		!strings.Contains(stderr, "workers: many is a string, want a number") {
		t.Errorf("exit %d, stdout %q, stderr %q; want %d naming cordonOnly and workers", code, out, stderr, exitUsage)
	}
}

// extraEnv's API rate limits are mapped to Drainpipe's, with how the two
// rates differ; other entries say there is no equivalent; heartbeatUntil
// is carried as the retry window (the smallest maxReceiveCount covering
// it), and the window is printed with the keys that lengthen it.
func TestNTHValuesExtraEnvAndHeartbeat(t *testing.T) {
	f := filepath.Join(t.TempDir(), "values.yaml")
	values := "extraEnv:\n- name: KUBE_API_QPS\n  value: \"50\"\n- name: KUBE_API_BURST\n  value: \"100\"\n- name: FOO\n  value: bar\nheartbeatUntil: 3600\n"
	if err := os.WriteFile(f, []byte(values), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLI(t, nil, "", "nth-values", f)
	var res nthResult
	if err := json.Unmarshal([]byte(out), &res); code != exitOK || err != nil {
		t.Fatalf("exit %d, %v, stderr %q", code, err, stderr)
	}
	gaps := map[string]string{}
	for _, g := range res.NotCarried {
		gaps[g.Value] = g.Why
	}
	for value, want := range map[string][]string{
		"extraEnv.KUBE_API_QPS":   {"DRAINPIPE_KUBE_QPS", "5 queries per second", "maxConcurrency"},
		"extraEnv.KUBE_API_BURST": {"DRAINPIPE_KUBE_BURST"},
		"extraEnv.FOO":            {"no Drainpipe equivalent"},
		"heartbeatUntil":          {"maxReceiveCount 9", "1h7m45s", "48 h", "HeartbeatTimeout"},
	} {
		for _, w := range want {
			if !strings.Contains(gaps[value], w) {
				t.Errorf("%s: %q, want it to say %q", value, gaps[value], w)
			}
		}
	}
	if res.Context["maxReceiveCount"] != float64(9) {
		t.Errorf("context maxReceiveCount %v, want 9 (the window covering heartbeatUntil)", res.Context["maxReceiveCount"])
	}
	if w := res.RetryWindow; w.Seconds != 4065 || w.MaxReceiveCount != 9 || len(w.LengthenWith) != 3 {
		t.Errorf("retryWindow %+v, want 4065 s with maxReceiveCount 9 and the keys that lengthen it", w)
	}
}

// TestNTHValuesSeveralFiles: releases of several clusters one stack is to
// serve; what they agree on is the context, each difference a conflict
// with every file's value.
func TestNTHValuesSeveralFiles(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"a.yaml": "cordonOnly: true\nlogLevel: debug\ntaintNode: true\n",
		"b.yaml": "cordonOnly: true\nlogLevel: info\nheartbeatUntil: 3600\n",
	}
	var paths []string
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	slices.Sort(paths)
	code, out, stderr := runCLI(t, nil, "", append([]string{"nth-values"}, paths...)...)
	var res nthMerged
	if err := json.Unmarshal([]byte(out), &res); code != exitOK || err != nil {
		t.Fatalf("exit %d, %v, stderr %q, out %s", code, err, stderr, out)
	}
	if res.Context["actionSpot"] != "cordon" {
		t.Errorf("context %v: want the cordon both set", res.Context)
	}
	want := []nthConflict{
		{Key: "env.DRAINPIPE_LOG_LEVEL", Values: map[string]any{paths[0]: "debug", paths[1]: nil}},
		{Key: "maxReceiveCount", Values: map[string]any{paths[0]: nil, paths[1]: float64(9)}},
	}
	if diff := cmp.Diff(want, res.Conflicts); diff != "" {
		t.Errorf("conflicts (-want +got):\n%s", diff)
	}
	if !strings.Contains(stderr, "differ on 2 settings") {
		t.Errorf("stderr %q does not warn of the conflicts", stderr)
	}
	if len(res.NotCarried) == 0 || res.NotCarried[0].File == "" {
		t.Errorf("notCarried %v: want each with its file", res.NotCarried)
	}
}
