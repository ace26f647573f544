package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/drainpipe/drainpipe/internal/preflight"
	"github.com/drainpipe/drainpipe/test/awsfake"
)

const (
	checkRole  = "arn:aws:iam::111122223333:role/Drainpipe-FunctionRole"
	checkQueue = "arn:aws:sqs:us-west-2:111122223333:Drainpipe-Queue"
	checkTopic = "arn:aws:sns:us-west-2:111122223333:Drainpipe-AlarmTopic"
	nthQueue   = "arn:aws:sqs:us-west-2:111122223333:nth-queue"
)

// checkAccount is an account halfway through a move from NTH: one group
// served, one still on NTH's hook name and queue, one the prefix misses,
// another cluster's group, and a page's worth of unrelated groups.
func checkAccount(t *testing.T) *awsfake.Server {
	t.Helper()
	fake := awsfake.New()
	t.Cleanup(fake.Close)
	for _, kv := range fake.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	fake.AddStack(awsfake.Stack{Name: "Drainpipe", Outputs: map[string]string{"FunctionName": "Drainpipe-Fn",
		"QueueArn": checkQueue, "RoleArn": checkRole, "AlarmTopicArn": checkTopic}})
	fake.AddFunction("Drainpipe-Fn", map[string]string{"DRAINPIPE_CLUSTERS": "prod", "DRAINPIPE_ASG_NAME_PREFIX": "prod-",
		"DRAINPIPE_LIFECYCLE_HOOK_NAMES": "drainpipe,drainpipe-launch", "DRAINPIPE_METRICS_STACK": "Drainpipe"})
	for i := range 120 {
		fake.AddAutoScalingGroup(awsfake.AutoScalingGroup{Name: fmt.Sprintf("unrelated-%03d", i)})
	}
	prod := map[string]string{"kubernetes.io/cluster/prod": "owned"}
	fake.AddAutoScalingGroup(awsfake.AutoScalingGroup{Name: "prod-workers", Tags: prod})
	fake.AddLifecycleHook(awsfake.LifecycleHook{ASG: "prod-workers", Name: "drainpipe", DefaultResult: "CONTINUE"})
	fake.AddAutoScalingGroup(awsfake.AutoScalingGroup{Name: "prod-nth", Tags: prod})
	fake.AddLifecycleHook(awsfake.LifecycleHook{ASG: "prod-nth", Name: "my-k8s-term-hook", NotificationTargetARN: nthQueue,
		RoleARN: "arn:aws:iam::111122223333:role/nth-hook"})
	fake.AddAutoScalingGroup(awsfake.AutoScalingGroup{Name: "legacy-workers", Tags: map[string]string{"eks:cluster-name": "prod"}})
	fake.AddLifecycleHook(awsfake.LifecycleHook{ASG: "legacy-workers", Name: "drainpipe"})
	fake.AddAutoScalingGroup(awsfake.AutoScalingGroup{Name: "dev-workers", Tags: map[string]string{"eks:cluster-name": "dev"}})
	fake.AddLifecycleHook(awsfake.LifecycleHook{ASG: "dev-workers", Name: "my-k8s-term-hook"})
	fake.AddCluster(awsfake.Cluster{Name: "prod"})
	fake.AddAccessEntry(awsfake.AccessEntry{Cluster: "prod", PrincipalARN: checkRole, KubernetesGroups: []string{"drainpipe"}})
	fake.AddTopic(checkTopic, awsfake.Subscription{Protocol: "email", Endpoint: "oncall@example.com", Pending: true})
	return fake
}

func decodeReport(t *testing.T, stdout string) (preflight.Report, map[string]preflight.HookRow, map[string]preflight.Check) {
	t.Helper()
	var rep preflight.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("check -o json: %v\n%s", err, stdout)
	}
	hooks, checks := map[string]preflight.HookRow{}, map[string]preflight.Check{}
	for _, h := range rep.Hooks {
		hooks[h.Group+"/"+h.Hook] = h
	}
	for _, c := range rep.Checks {
		checks[c.Cluster+"/"+c.What] = c
	}
	return rep, hooks, checks
}

// `check --stack` reads the stack's outputs and its function's
// environment, lists the served cluster's groups past the first page, and
// finds the migration's gaps: NTH's hook name and queue, a group the
// prefix misses, an alarm subscription never confirmed. Through the real
// SDK clients, so the wire formats are the services'.
func TestCheckStackFindsGaps(t *testing.T) {
	fake := checkAccount(t)
	code, stdout, stderr := runCLI(t, nil, "", "check", "--stack", "Drainpipe", "-o", "json")
	if code != exitFail {
		t.Fatalf("check = %d, want 1 (gaps): %s", code, stderr)
	}
	rep, hooks, checks := decodeReport(t, stdout)
	if rep.Stack.ASGNamePrefix != "prod-" || rep.Stack.RoleARN != checkRole || rep.Stack.QueueARN != checkQueue {
		t.Errorf("stack read as %+v", rep.Stack)
	}
	want := map[string]preflight.Status{
		"prod-workers/drainpipe": preflight.OK, "prod-nth/my-k8s-term-hook": preflight.Gap, "legacy-workers/drainpipe": preflight.Gap,
	}
	for key, status := range want {
		if hooks[key].Status != status {
			t.Errorf("%s: %+v, want %s", key, hooks[key], status)
		}
	}
	if len(hooks) != len(want) {
		t.Errorf("hook rows %v, want only the prod groups' %d", hooks, len(want))
	}
	if c := checks["prod/access entry"]; c.Status != preflight.OK {
		t.Errorf("access entry: %+v", c)
	}
	if c := checks["/alarm topic"]; c.Status != preflight.Gap || !strings.Contains(c.Detail, "unconfirmed") {
		t.Errorf("alarm topic: %+v", c)
	}
	if c := checks["prod/rbac"]; c.Status != preflight.Unknown || !strings.Contains(c.Detail, "reaching the cluster") {
		t.Errorf("rbac without a reachable cluster: %+v", c)
	}
	// The second page was asked for (a loopback call may be retried, so
	// the calls are not counted).
	if !slices.ContainsFunc(fake.CallsTo("DescribeAutoScalingGroups"), func(c awsfake.Call) bool { return c.Params.Get("NextToken") == "100" }) {
		t.Error("no DescribeAutoScalingGroups call for the second page")
	}
	for _, c := range fake.Calls() {
		if !c.Signed || c.Action == "" {
			t.Errorf("call %+v: unsigned or unrouted", c)
		}
		switch c.Action {
		case "CompleteLifecycleAction", "RecordLifecycleActionHeartbeat", "PutLifecycleHook", "SendMessage":
			t.Errorf("check wrote: %s", c.Action)
		}
	}
}

// With the context an operator would deploy (NTH's hook name added, the
// queue named) the NTH group's hook is still a gap while it notifies
// NTH's queue; --others and a confirmed subscription clear the rest. A
// denied read is unknown with its reason, not ok.
func TestCheckContextAndDenied(t *testing.T) {
	fake := checkAccount(t)
	fake.AddTopic(checkTopic, awsfake.Subscription{Protocol: "email", Endpoint: "oncall@example.com"})
	fake.Inject("DescribeAccessEntry", awsfake.AccessDenied, -1)
	code, stdout, stderr := runCLI(t, nil, "", "check", "-c", "clusters=prod", "-c", `asgNames=["prod-workers","prod-nth"]`,
		"-c", "lifecycleHookNames=drainpipe,my-k8s-term-hook", "--role-arn", checkRole, "--queue-arn", checkQueue,
		"--topic-arn", checkTopic, "--others", "drainpipe-other", "-o", "json")
	if code != exitFail {
		t.Fatalf("check = %d: %s", code, stderr)
	}
	_, hooks, checks := decodeReport(t, stdout)
	if h := hooks["prod-nth/my-k8s-term-hook"]; h.Status != preflight.Gap || !strings.Contains(h.Reason, nthQueue) {
		t.Errorf("NTH's hook: %+v, want a gap naming its queue", h)
	}
	if h := hooks["legacy-workers/drainpipe"]; h.Status != preflight.Gap || !strings.Contains(h.Reason, "asgNames=prod-workers,prod-nth") {
		t.Errorf("legacy: %+v", h)
	}
	if c := checks["prod/access entry"]; c.Status != preflight.Unknown || !strings.Contains(c.Detail, "AccessDenied") {
		t.Errorf("denied access entry: %+v", c)
	}
	if c := checks["/alarm topic"]; c.Status != preflight.OK {
		t.Errorf("confirmed subscriber: %+v", c)
	}

	code, stdout, _ = runCLI(t, nil, "", "check", "-c", "clusters=prod", "-c", "asgNamePrefix=prod-")
	for _, want := range []string{"GROUP", "prod-nth", "not served", "CLUSTER", "access entry"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
	if code != exitFail {
		t.Errorf("table run = %d", code)
	}
}

// Bad arguments are exit 2, every problem at once, before any call.
func TestCheckBadInput(t *testing.T) {
	fake := checkAccount(t)
	code, _, stderr := runCLI(t, nil, "", "check", "--stack", "x", "-c", "clusters=a", "-o", "yaml", "--role-arn", "role", "--timeout", "0s")
	for _, want := range []string{"--stack and -c", "-o \"yaml\"", "--role-arn \"role\"", "--timeout"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q: %s", want, stderr)
		}
	}
	if code != exitUsage {
		t.Errorf("code %d, want 2", code)
	}
	code, _, stderr = runCLI(t, nil, "", "check", "-c", "bogus=1", "-c", "clusters", "-c", "asgNames=[1]")
	for _, want := range []string{"bogus", "want key=value", "JSON array"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q: %s", want, stderr)
		}
	}
	if code != exitUsage {
		t.Errorf("code %d, want 2", code)
	}
	if code, _, stderr = runCLI(t, nil, "", "check"); code != exitUsage || !strings.Contains(stderr, "no cluster") {
		t.Errorf("no configuration: %d %s", code, stderr)
	}
	if n := len(fake.Calls()); n != 0 {
		t.Errorf("%d AWS calls on bad input", n)
	}
}

// Without an access entry, a cluster that also reads aws-auth may map the
// role there (unknown); one on access entries alone cannot (a gap). The
// authentication mode comes from DescribeCluster's accessConfig.
func TestCheckAccessEntryModes(t *testing.T) {
	fake := checkAccount(t)
	fake.AddCluster(awsfake.Cluster{Name: "old", AuthMode: "API_AND_CONFIG_MAP"})
	fake.AddCluster(awsfake.Cluster{Name: "new", AuthMode: "API"})
	_, stdout, _ := runCLI(t, nil, "", "check", "-c", "clusters=prod,old,new", "--role-arn", checkRole, "-o", "json")
	_, _, checks := decodeReport(t, stdout)
	for cluster, want := range map[string]preflight.Status{"prod": preflight.OK, "old": preflight.Unknown, "new": preflight.Gap} {
		if c := checks[cluster+"/access entry"]; c.Status != want {
			t.Errorf("%s: %+v, want %s", cluster, c, want)
		}
	}
}
