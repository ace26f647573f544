package stack

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// statement is one policy statement with its intrinsics rendered.
type statement struct {
	Where     string // which policy, e.g. "Policy(FunctionRole)"
	Effect    string
	Principal string
	Actions   []string
	NotAction bool
	Resources []string
	Condition string
}

// statements collects every statement of every policy in the template:
// identity policies, role trust and inline policies, queue policies.
func (tpl template) statements() []statement {
	var out []statement
	add := func(where string, doc any) {
		d, _ := doc.(map[string]any)
		list, ok := d["Statement"].([]any)
		if !ok {
			list = []any{d["Statement"]}
		}
		for _, e := range list {
			m, _ := e.(map[string]any)
			st := statement{Where: where, Effect: fmt.Sprint(m["Effect"]), Actions: strs(m["Action"])}
			if na, ok := m["NotAction"]; ok {
				st.NotAction, st.Actions = true, strs(na)
			}
			if p, ok := m["Principal"]; ok {
				st.Principal = tpl.render(p)
			}
			res, ok := m["Resource"].([]any)
			if !ok && m["Resource"] != nil {
				res = []any{m["Resource"]}
			}
			for _, r := range res {
				st.Resources = append(st.Resources, tpl.render(r))
			}
			if c, ok := m["Condition"]; ok {
				st.Condition = tpl.render(c)
			}
			slices.Sort(st.Actions)
			slices.Sort(st.Resources)
			out = append(out, st)
		}
	}
	for _, r := range tpl.Resources {
		switch r.Type {
		case "AWS::IAM::Policy", "AWS::IAM::ManagedPolicy":
			add(fmt.Sprintf("Policy(%s)", tpl.render(r.Properties["Roles"])), r.Properties["PolicyDocument"])
		case "AWS::IAM::Role":
			add("Trust", r.Properties["AssumeRolePolicyDocument"])
			for _, p := range asList(r.Properties["Policies"]) {
				add("InlinePolicy", p.(map[string]any)["PolicyDocument"])
			}
		case "AWS::SQS::QueuePolicy":
			add(fmt.Sprintf("QueuePolicy(%s)", tpl.render(r.Properties["Queues"])), r.Properties["PolicyDocument"])
		}
	}
	return out
}

func asList(v any) []any { l, _ := v.([]any); return l }

// wideGrants returns the Allow statements that grant a wildcard action or
// use NotAction. Deny statements may be broad: the TLS-only statement
// denies sqs:* on purpose, so no action escapes it.
func wideGrants(stmts []statement) []string {
	var bad []string
	for _, s := range stmts {
		if s.Effect != "Allow" {
			continue
		}
		if s.NotAction {
			bad = append(bad, fmt.Sprintf("%s: NotAction %v", s.Where, s.Actions))
		}
		for _, a := range s.Actions {
			if strings.ContainsAny(a, "*?") {
				bad = append(bad, fmt.Sprintf("%s: action %q", s.Where, a))
			}
		}
		if s.Principal == "*" || strings.Contains(s.Principal, `"AWS":"*"`) {
			bad = append(bad, fmt.Sprintf("%s: principal %s", s.Where, s.Principal))
		}
	}
	return bad
}

func TestWideGrantsDetectsWidening(t *testing.T) {
	var doc map[string]any
	json.Unmarshal([]byte(`{"Resources": {
		"P": {"Type": "AWS::IAM::Policy", "Properties": {"Roles": [], "PolicyDocument": {"Statement": [
			{"Effect": "Allow", "Action": "ec2:DescribeInstances", "Resource": "*"},
			{"Effect": "Allow", "Action": ["sqs:ReceiveMessage", "sqs:*"], "Resource": "*"},
			{"Effect": "Allow", "NotAction": "iam:PassRole", "Resource": "*"},
			{"Effect": "Deny", "Action": "*", "Resource": "*"}]}}},
		"Q": {"Type": "AWS::SQS::QueuePolicy", "Properties": {"Queues": [], "PolicyDocument": {"Statement":
			{"Effect": "Allow", "Principal": "*", "Action": "sqs:SendMessage", "Resource": "*"}}}}}}`), &doc)
	raw, _ := json.Marshal(doc)
	var tpl template
	json.Unmarshal(raw, &tpl)
	got := wideGrants(tpl.statements())
	slices.Sort(got)
	want := []string{
		`Policy(): NotAction [iam:PassRole]`,
		`Policy(): action "sqs:*"`,
		`QueuePolicy(): principal *`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("wideGrants (-want +got):\n%s", diff)
	}
}

func TestNoWildcardActionGranted(t *testing.T) {
	p := testProps(t)
	p.ASGNotificationRole = true
	if bad := wideGrants(synth(t, p).statements()); len(bad) > 0 {
		t.Errorf("wildcard grants in the template:\n%s", strings.Join(bad, "\n"))
	}
}

// TestFunctionRolePolicy pins the function's permissions exactly: adding an
// action or widening a resource fails here.
func TestFunctionRolePolicy(t *testing.T) {
	const arn = "arn:${AWS::Partition}:%s:${AWS::Region}:${AWS::AccountId}:%s"
	group := func(n string) string {
		return fmt.Sprintf(arn, "autoscaling", "autoScalingGroup:*:autoScalingGroupName/"+n)
	}
	cluster := func(n string) string { return fmt.Sprintf(arn, "eks", "cluster/"+n) }
	base := []statement{
		{Effect: "Allow", Actions: []string{"logs:CreateLogStream", "logs:PutLogEvents"}, Resources: []string{"${LogGroup.Arn}"}},
		{Effect: "Allow", Actions: []string{"ec2:DescribeInstanceStatus", "ec2:DescribeInstances"}, Resources: []string{"*"},
			Condition: `{"StringEquals":{"aws:RequestedRegion":"${AWS::Region}"}}`},
		// The event source's consume grant; the function itself uses two of
		// its actions, on this queue only, to hasten redelivery
		// (internal/redeliver): sqs:GetQueueUrl, and ChangeMessageVisibilityBatch,
		// which IAM authorises as sqs:ChangeMessageVisibility.
		{Effect: "Allow", Actions: []string{"sqs:ChangeMessageVisibility", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl", "sqs:ReceiveMessage"}, Resources: []string{"${Queue.Arn}"}},
		// The cordon queue's event source's grant, and nothing else on it.
		{Effect: "Allow", Actions: []string{"sqs:ChangeMessageVisibility", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl", "sqs:ReceiveMessage"}, Resources: []string{"${CordonQueue.Arn}"}},
	}
	lifecycle := func(groups ...string) statement {
		return statement{Effect: "Allow", Actions: []string{"autoscaling:CompleteLifecycleAction", "autoscaling:RecordLifecycleActionHeartbeat"}, Resources: groups}
	}
	// Read-only, and Auto Scaling's Describe actions take no resource.
	describeHooks := statement{Effect: "Allow", Actions: []string{"autoscaling:DescribeLifecycleHooks"}, Resources: []string{"*"}}
	tests := []struct {
		name   string
		change func(*Props)
		want   []statement
	}{
		{"names and prefix", func(*Props) {}, append(slices.Clone(base),
			statement{Effect: "Allow", Actions: []string{"eks:DescribeCluster"}, Resources: []string{cluster("prod"), cluster("staging")}},
			lifecycle(group("eks-*"), group("workers")), describeHooks)},
		{"no groups", func(p *Props) { p.ASGNames, p.ASGNamePrefix = nil, "" }, append(slices.Clone(base),
			statement{Effect: "Allow", Actions: []string{"eks:DescribeCluster"}, Resources: []string{cluster("prod"), cluster("staging")}})},
		{"one cluster on aws-auth", func(p *Props) { p.AWSAuthClusters = []string{"prod"}; p.ASGNamePrefix = "" }, append(slices.Clone(base),
			statement{Effect: "Allow", Actions: []string{"eks:DescribeCluster"}, Resources: []string{cluster("prod"), cluster("staging")}},
			lifecycle(group("workers")), describeHooks)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := testProps(t)
			tt.change(&p)
			tpl := synth(t, p)
			var got []statement
			for _, s := range tpl.statements() {
				if s.Where == "Policy(${FunctionRole})" {
					s.Where = ""
					got = append(got, s)
				}
			}
			sortStatements(got)
			sortStatements(tt.want)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("function role policy (-want +got):\n%s", diff)
			}
		})
	}
}

func sortStatements(s []statement) {
	slices.SortFunc(s, func(a, b statement) int { return strings.Compare(a.Actions[0], b.Actions[0]) })
}

func TestRolesTrustOnlyTheirService(t *testing.T) {
	p := testProps(t)
	p.ASGNotificationRole = true
	var got []string
	for _, s := range synth(t, p).statements() {
		if s.Where == "Trust" {
			got = append(got, fmt.Sprintf("%s %s %v", s.Effect, s.Principal, s.Actions))
		}
	}
	slices.Sort(got)
	want := []string{
		`Allow {"Service":"autoscaling.amazonaws.com"} [sts:AssumeRole]`,
		`Allow {"Service":"lambda.amazonaws.com"} [sts:AssumeRole]`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("trust policies (-want +got):\n%s", diff)
	}
}

func TestNotificationRole(t *testing.T) {
	for _, on := range []bool{false, true} {
		t.Run(fmt.Sprint(on), func(t *testing.T) {
			p := testProps(t)
			p.ASGNotificationRole = on
			tpl := synth(t, p)
			var got []statement
			for _, s := range tpl.statements() {
				if s.Where == "Policy(${Role})" {
					s.Where = ""
					got = append(got, s)
				}
			}
			var want []statement
			if on {
				want = []statement{{Effect: "Allow", Actions: []string{"sqs:GetQueueUrl", "sqs:SendMessage"}, Resources: []string{"${Queue.Arn}"}}}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("notification role policy (-want +got):\n%s", diff)
			}
			if _, ok := tpl.Outputs["LifecycleNotificationRoleArn"]; ok != on {
				t.Errorf("output LifecycleNotificationRoleArn present = %v, want %v", ok, on)
			}
		})
	}
}
