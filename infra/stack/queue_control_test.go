package stack

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
	"github.com/google/go-cmp/cmp"
)

const queueAdmin = "arn:aws:iam::123456789012:role/platform-admin"

// execRole is CDK's bootstrap execution role, as the simulation deploys it.
var execRole = "arn:aws:iam::" + simAccount + ":role/cdk-hnb659fds-cfn-exec-role-" + simAccount + "-" + simRegion

// controlVariants are the templates the queue-control guard is proven on.
func controlVariants(t *testing.T) map[string]template {
	t.Helper()
	full := testProps(t)
	full.OperatorRoleARNs, full.SenderRoleARNs, full.QueueAdminARNs = []string{operatorRole}, []string{redriveRole}, []string{queueAdmin}
	full.SNSTopicARNs, full.ASGNotificationRole = []string{ownTopic}, true
	standalone, err := NewStandalone(awscdk.NewApp(nil), "Standalone", full)
	if err != nil {
		t.Fatalf("NewStandalone: %v", err)
	}
	env := &awscdk.StackProps{Env: &awscdk.Environment{Account: jsii.String(simAccount), Region: jsii.String(simRegion)}}
	pinned, err := New(awscdk.NewApp(nil), "Test", full, env)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return map[string]template{
		"defaults":   synth(t, testProps(t)),
		"full":       synth(t, full),
		"env":        templateOf(t, pinned),
		"standalone": templateOf(t, standalone),
	}
}

// TestQueueControlEvaluated (issue 39, item 5): on all three queues of every
// template variant, as AWS evaluates the queue policy, no `sqs:*` principal
// of the account may change the queues' attributes, permissions or tags
// or delete them (operators included) but the root user, a named admin and
// the deployer: CDK's execution role, or for the standalone template
// CloudFormation acting for its caller. No other account may send.
func TestQueueControlEvaluated(t *testing.T) {
	sqsAll := map[string]any{"Version": "2012-10-17", "Statement": []any{map[string]any{"Effect": "Allow", "Action": "sqs:*", "Resource": "*"}}}
	const foreign = "arn:aws:iam::210987654321:role/attacker"
	unnamedAllowed, foreignSent := 0, 0
	for name, tpl := range controlVariants(t) {
		for _, alias := range []string{"Queue", "DeadLetterQueue", "CordonQueue"} {
			t.Run(name+"/"+alias, func(t *testing.T) {
				queue := tpl.arn(findID(t, tpl, alias))
				policy := tpl.policyOf(t, "AWS::SQS::QueuePolicy", "Queues", "${"+alias+"}")
				var reqs []simRequest
				want := map[string]string{}
				ask := func(who, principal, action, result string, viaCFN bool) {
					account := strings.Split(principal, ":")[4]
					ctx := map[string]any{"aws:SecureTransport": "true", "aws:PrincipalArn": principal, "aws:PrincipalAccount": account}
					if viaCFN {
						ctx["aws:CalledVia"] = []string{cfnService}
					}
					n := who + " " + action
					reqs = append(reqs, simRequest{Name: n, Principal: principal, Action: action, Resource: queue,
						AccountID: simAccount, Context: ctx, IdentityPolicies: []any{sqsAll}})
					want[n] = result
				}
				standalone := name == "standalone"
				for _, a := range controlActions {
					ask("unnamed admin", "arn:aws:iam::"+simAccount+":role/admin", a, "ExplicitlyDenied", false)
					ask("operator", operatorRole, a, "ExplicitlyDenied", false)
					ask("foreign admin", foreign, a, "refused", false)
					ask("root", "arn:aws:iam::"+simAccount+":root", a, "Allowed", false)
					if name != "defaults" {
						ask("named admin", queueAdmin, a, "Allowed", false)
					}
					if standalone {
						ask("deployer through CloudFormation", "arn:aws:iam::"+simAccount+":role/deployer", a, "Allowed", true)
					} else {
						ask("execution role", execRole, a, "Allowed", false)
						ask("unnamed admin through CloudFormation", "arn:aws:iam::"+simAccount+":role/admin", a, "ExplicitlyDenied", true)
					}
				}
				// A message move: unnamed admins may neither start one
				// (replaying the dead letters) nor cancel a redrive; the
				// operators and named admins run `drainpipe dlq redrive`.
				for _, a := range moveActions {
					ask("unnamed admin", "arn:aws:iam::"+simAccount+":role/admin", a, "ExplicitlyDenied", false)
					ask("unnamed admin through CloudFormation", "arn:aws:iam::"+simAccount+":role/admin", a, "ExplicitlyDenied", true)
					ask("root", "arn:aws:iam::"+simAccount+":root", a, "Allowed", false)
					if name != "defaults" {
						ask("named admin", queueAdmin, a, "Allowed", false)
						ask("operator", operatorRole, a, "Allowed", false)
					}
				}
				ask("foreign sender", foreign, "sqs:SendMessage", "refused", false)
				got := simulate(t, policy, reqs)
				for n, w := range want {
					if strings.HasPrefix(n, "unnamed admin ") && got[n] == "Allowed" {
						unnamedAllowed++
					}
					if strings.HasPrefix(n, "foreign sender") && got[n] == "Allowed" {
						foreignSent++
					}
					if w == "refused" && strings.HasSuffix(got[n], "Denied") {
						got[n] = w
					}
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s %s policy decisions (-want +got):\n%s", name, alias, diff)
				}
			})
		}
	}
	t.Logf("queue-control requests of an unnamed sqs:* principal allowed: %d; foreign senders allowed: %d", unnamedAllowed, foreignSent)
}

// TestQueueControlAlarm: a CloudTrail-backed rule matches the control
// actions on any queue, by the queue URL's path (either endpoint form),
// a message move from or into any queue, and any move's cancellation,
// and notifies the alarm topic, whose policy lets EventBridge publish.
func TestQueueControlAlarm(t *testing.T) {
	tpl := synth(t, testProps(t))
	rule := tpl.byAlias(t, "QueueControlAlarm")
	got := tpl.render(rule.Properties["EventPattern"])
	queues := `["${Queue.Arn}","${DeadLetterQueue.Arn}","${CordonQueue.Arn}"]`
	want := `{"detail":{"$or":[{"eventName":["SetQueueAttributes","DeleteQueue","AddPermission","RemovePermission","TagQueue","UntagQueue"],` +
		`"requestParameters":{"queueUrl":[{"suffix":"/${AWS::AccountId}/${Queue.QueueName}"},` +
		`{"suffix":"/${AWS::AccountId}/${DeadLetterQueue.QueueName}"},{"suffix":"/${AWS::AccountId}/${CordonQueue.QueueName}"}]}},` +
		`{"eventName":["StartMessageMoveTask"],"requestParameters":{"sourceArn":` + queues + `}},` +
		`{"eventName":["StartMessageMoveTask"],"requestParameters":{"destinationArn":` + queues + `}},` +
		`{"eventName":["CancelMessageMoveTask"]}],` +
		`"eventSource":["sqs.amazonaws.com"]},"detail-type":["AWS API Call via CloudTrail"],"source":["aws.sqs"]}`
	if got != want {
		t.Errorf("pattern\n got %s\nwant %s", got, want)
	}
	targets := asList(rule.Properties["Targets"])
	if len(targets) != 1 || tpl.render(targets[0].(map[string]any)["Arn"]) != "${Topic}" {
		t.Fatalf("targets %s, want the alarm topic", tpl.render(targets))
	}
	if in := tpl.render(targets[0].(map[string]any)["InputTransformer"]); !strings.Contains(in, "$.detail.userIdentity.arn") {
		t.Errorf("input transformer %s does not name who called", in)
	}
	var publish bool
	for _, r := range tpl.ofType("AWS::SNS::TopicPolicy") {
		doc, _ := json.Marshal(tpl.resolve(r.Properties["PolicyDocument"]))
		publish = publish || strings.Contains(string(doc), `"Action":"sns:Publish","Effect":"Allow","Principal":{"Service":"events.amazonaws.com"}`)
	}
	if !publish {
		t.Errorf("no topic policy lets events.amazonaws.com publish to the alarm topic")
	}
}

// TestQueueAdminsValidated: queueAdminArns are roles or users of the
// stack's account, without wildcards, read from context.
func TestQueueAdminsValidated(t *testing.T) {
	for _, tt := range []struct {
		admins []string
		want   string
	}{
		{[]string{queueAdmin, "arn:aws:iam::123456789012:user/alice"}, ""},
		{[]string{"arn:aws:iam::123456789012:role/*"}, `queueAdminArns: "arn:aws:iam::123456789012:role/*" is not the ARN of an IAM role or user`},
		{[]string{"arn:aws:iam::123456789012:group/admins"}, "queueAdminArns"},
		{[]string{queueAdmin, "arn:aws:iam::210987654321:role/admin"}, "queueAdminArns: principals of 2 accounts"},
	} {
		t.Run(fmt.Sprint(tt.admins), func(t *testing.T) {
			p := testProps(t)
			p.QueueAdminARNs = tt.admins
			checkValidate(t, p, tt.want)
		})
	}
	p, err := FromContext(func(k string) any { return map[string]any{"queueAdminArns": queueAdmin}[k] })
	if err != nil || !slices.Equal(p.QueueAdminARNs, []string{queueAdmin}) {
		t.Errorf("FromContext(queueAdminArns) = %v, %v", p.QueueAdminARNs, err)
	}
}
