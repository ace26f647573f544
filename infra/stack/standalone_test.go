package stack

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/google/go-cmp/cmp"
)

// TestStandaloneMatchesStack: the standalone template has the CDK stack's
// resources and policies for the same settings, and needs no bootstrap.
func TestStandaloneMatchesStack(t *testing.T) {
	p := testProps(t)
	p.ASGNotificationRole = true
	s, err := NewStandalone(awscdk.NewApp(nil), "Standalone", p)
	if err != nil {
		t.Fatalf("NewStandalone: %v", err)
	}
	got := templateOf(t, s)
	// Its parameters' defaults are the settings it was made with.
	got.defaults = true
	want := synth(t, p)

	types := func(tpl template) []string {
		var out []string
		for _, r := range tpl.Resources {
			if r.Condition != "" {
				continue // exists only for some parameter values
			}
			out = append(out, r.Type)
		}
		slices.Sort(out)
		return out
	}
	if diff := cmp.Diff(types(want), types(got)); diff != "" {
		t.Errorf("resource types (-stack +standalone):\n%s", diff)
	}
	stmts := func(tpl template) []statement {
		out := tpl.statements()
		for i, s := range out {
			// Who deploys differs (CDK's execution role, CloudFormation
			// for its caller): TestQueueControlEvaluated covers both.
			if s.Effect == "Deny" && slices.Contains(s.Actions, "sqs:SetQueueAttributes") {
				out[i].Condition = "(the deployer)"
			}
		}
		slices.SortFunc(out, func(a, b statement) int {
			x, _ := json.Marshal(a)
			y, _ := json.Marshal(b)
			return slices.Compare(x, y)
		})
		return out
	}
	if diff := cmp.Diff(stmts(want), stmts(got)); diff != "" {
		t.Errorf("policy statements (-stack +standalone):\n%s", diff)
	}
	// The function's environment too, but for the names taken from the
	// deployed stack and the actions left to the function's defaults.
	env := func(tpl template) map[string]string {
		vars := tpl.byAlias(t, "Function").Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
		out := map[string]string{}
		for k, v := range vars {
			if r := tpl.render(v); r != "" && k != "DRAINPIPE_METRICS_STACK" {
				out[k] = r
			}
		}
		return out
	}
	if diff := cmp.Diff(env(want), env(got)); diff != "" {
		t.Errorf("function environment (-stack +standalone):\n%s", diff)
	}
	var params []string
	for k := range got.Parameters {
		params = append(params, k)
	}
	slices.Sort(params)
	wantParams := []string{"ActionAsgLifecycle", "ActionCapacityBlock", "ActionCapacityReservation", "ActionRebalance", "ActionScheduledChange",
		"ActionSpot", "ActionStateChange", "AlarmEmail", "Architecture", "AsgNamePrefix", "Clusters", "CodeBucket", "CodeKey", "DryRun",
		"LifecycleHookNames", "MaxConcurrency", "RequiredTag"}
	if diff := cmp.Diff(wantParams, params); diff != "" {
		t.Errorf("parameters (-want +got):\n%s", diff)
	}
	if len(got.Rules) > 0 {
		t.Errorf("template has Rules %v (the bootstrap version check)", got.Rules)
	}
	got.defaults = false
	code := got.byAlias(t, "Function").Properties["Code"]
	if r := got.render(code); r != `{"S3Bucket":"${CodeBucket}","S3Key":"${CodeKey}"}` {
		t.Errorf("function code = %s, want the CodeBucket and CodeKey parameters", r)
	}
}

// TestStandaloneParameters (issue 25, item 2): the clusters, the served
// group prefix, the actions and the dry run come from parameters wherever
// they are used: the function's environment, its IAM, the access entries
// and the lifecycle rules.
func TestStandaloneParameters(t *testing.T) {
	s, err := NewStandalone(awscdk.NewApp(nil), "Standalone", testProps(t))
	if err != nil {
		t.Fatalf("NewStandalone: %v", err)
	}
	tpl := templateOf(t, s)
	vars := tpl.byAlias(t, "Function").Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
	uses := map[string]string{
		"DRAINPIPE_CLUSTERS":         tpl.render(vars["DRAINPIPE_CLUSTERS"]),
		"DRAINPIPE_ASG_NAME_PREFIX":  tpl.render(vars["DRAINPIPE_ASG_NAME_PREFIX"]),
		"DRAINPIPE_DRY_RUN":          tpl.render(vars["DRAINPIPE_DRY_RUN"]),
		"DRAINPIPE_ACTION_REBALANCE": tpl.render(vars["DRAINPIPE_ACTION_REBALANCE"]),
		"access entries":             tpl.render(tpl.ofType("AWS::EKS::AccessEntry")[0].Properties["ClusterName"]),
	}
	for where, param := range map[string]string{
		"DRAINPIPE_CLUSTERS": "Clusters", "DRAINPIPE_ASG_NAME_PREFIX": "${AsgNamePrefix}", "DRAINPIPE_DRY_RUN": "${DryRun}",
		"DRAINPIPE_ACTION_REBALANCE": "${ActionRebalance}", "access entries": "Clusters",
	} {
		if !strings.Contains(uses[where], param) {
			t.Errorf("%s = %s, want it from parameter %s", where, uses[where], param)
		}
	}
	var rules []string
	for _, r := range tpl.ofType("AWS::Events::Rule") {
		rules = append(rules, tpl.render(r.Properties["EventPattern"]))
	}
	if !strings.Contains(strings.Join(rules, " "), `{"prefix":"${AsgNamePrefix}"}`) {
		t.Errorf("no lifecycle rule matches the AsgNamePrefix parameter: %v", rules)
	}
	if n := strings.Count(strings.Join(rules, " "), `"LifecycleHookName":"${LifecycleHookNames}"`); n != 2 {
		t.Errorf("%d lifecycle rules match the LifecycleHookNames parameter, want 2: %v", n, rules)
	}
	if got := tpl.render(vars["DRAINPIPE_LIFECYCLE_HOOK_NAMES"]); got != "${LifecycleHookNames}" {
		t.Errorf("DRAINPIPE_LIFECYCLE_HOOK_NAMES = %s, want the LifecycleHookNames parameter", got)
	}
}
