package stack

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
)

// TestTwoStacksOneRegion deploys two stacks in one account and region for
// disjoint clusters with different settings, as teams whose clusters need
// different policies do: nothing either names collides, each receives
// every EC2 notice (its own rules, its own queue) and acts only on its own
// clusters, and each serves the lifecycle hooks of its own groups only.
func TestTwoStacksOneRegion(t *testing.T) {
	app := awscdk.NewApp(nil)
	env := &awscdk.StackProps{Env: &awscdk.Environment{Account: jsii.String(simAccount), Region: jsii.String(simRegion)}}
	stacks := map[string]awscdk.Stack{}
	for _, team := range []struct{ name, cluster, group, action, effect string }{
		{"Drainpipe-batch", "batch", "batch-workers", "cordon", "NoSchedule"},
		{"Drainpipe-web", "web", "web-workers", "cordon-and-drain", "PreferNoSchedule"},
	} {
		p := Defaults()
		p.AssetDir = fakeAsset(t)
		p.Clusters, p.ASGNames = []string{team.cluster}, []string{team.group}
		p.Actions.Rebalance = team.action
		p.Env = map[string]string{"DRAINPIPE_TAINT_EFFECT": team.effect}
		s, err := New(app, team.name, p, env)
		if err != nil {
			t.Fatalf("%s: %v", team.name, err)
		}
		stacks[team.name] = s
	}
	tpls := map[string]template{} // after both are built: synthesis freezes the app
	for name, s := range stacks {
		tpls[name] = templateOf(t, s)
	}
	batch, web := tpls["Drainpipe-batch"], tpls["Drainpipe-web"]

	if len(physicalNames(batch)) == 0 {
		t.Fatal("the stack names none of its resources: the queue's name is its own")
	}
	if shared := intersect(physicalNames(batch), physicalNames(web)); len(shared) > 0 {
		t.Errorf("names both stacks give their resources: %v", shared)
	}
	if b, w := noticePatterns(batch), noticePatterns(web); len(b) == 0 || !slices.Equal(b, w) {
		t.Errorf("EC2 notice rules differ, so one stack misses notices the other receives:\n batch %v\n web   %v", b, w)
	}
	for name, want := range map[string][2]string{"Drainpipe-batch": {"batch", "batch-workers"}, "Drainpipe-web": {"web", "web-workers"}} {
		tpl := tpls[name]
		vars, _ := tpl.byAlias(t, "Function").Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
		if got := fmt.Sprint(vars["DRAINPIPE_CLUSTERS"]); got != want[0] {
			t.Errorf("%s: DRAINPIPE_CLUSTERS = %q, want %q only", name, got, want[0])
		}
		if groups := lifecycleGroups(tpl); !slices.Equal(groups, []string{want[1]}) {
			t.Errorf("%s: lifecycle rules match groups %v, want [%s] only", name, groups, want[1])
		}
	}
}

// physicalName is the property that names a resource of each type in its
// account and region, where two resources may not share a name.
var physicalName = map[string]string{
	"AWS::SQS::Queue": "QueueName", "AWS::Lambda::Function": "FunctionName", "AWS::IAM::Role": "RoleName",
	"AWS::Events::Rule": "Name", "AWS::CloudWatch::Alarm": "AlarmName", "AWS::CloudWatch::Dashboard": "DashboardName",
	"AWS::Logs::LogGroup": "LogGroupName", "AWS::SNS::Topic": "TopicName", "AWS::Scheduler::Schedule": "Name",
	"AWS::IAM::ManagedPolicy": "ManagedPolicyName",
}

// physicalNames are the names a template gives its resources itself,
// rendered; the others CloudFormation makes from the stack's name.
func physicalNames(tpl template) []string {
	var out []string
	for _, r := range tpl.Resources {
		if k, ok := physicalName[r.Type]; ok && r.Properties[k] != nil {
			out = append(out, r.Type+" "+k+"="+tpl.render(r.Properties[k]))
		}
	}
	return out
}

func intersect(a, b []string) []string {
	var out []string
	for _, x := range a {
		if slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// noticePatterns are the event patterns of the rules for EC2's own
// notices (every rule but the Auto Scaling lifecycle and schedule ones),
// sorted.
func noticePatterns(tpl template) []string {
	var out []string
	for _, r := range tpl.ofType("AWS::Events::Rule") {
		pat, ok := r.Properties["EventPattern"].(map[string]any)
		if !ok || slices.Contains(strs(pat["source"]), "aws.autoscaling") {
			continue
		}
		b, _ := json.Marshal(pat)
		out = append(out, string(b))
	}
	slices.Sort(out)
	return out
}

// lifecycleGroups are the group names the lifecycle rules match.
func lifecycleGroups(tpl template) []string {
	var out []string
	for _, r := range tpl.ofType("AWS::Events::Rule") {
		pat, _ := r.Properties["EventPattern"].(map[string]any)
		detail, _ := pat["detail"].(map[string]any)
		for _, g := range strs(detail["AutoScalingGroupName"]) {
			if !slices.Contains(out, g) {
				out = append(out, g)
			}
		}
	}
	slices.Sort(out)
	return out
}
