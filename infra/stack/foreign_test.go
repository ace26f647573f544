package stack

import (
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/google/go-cmp/cmp"
)

// TestOneForeignAccountRefused: every trusted ARN in one other account
// passes Validate (one account) and, the stack's account unknown at synth,
// cannot be refused by synth; the template then refuses a deploy to any
// other account than theirs (a CloudFormation rule, checked before anything
// is created), and, as AWS evaluates the queue policy, a topic of another
// account than the queue's cannot send to it.
func TestOneForeignAccountRefused(t *testing.T) {
	p := testProps(t)
	p.SNSTopicARNs, p.OperatorRoleARNs = []string{foreignTopic}, []string{foreignRole}
	tpl := synth(t, p)
	if got := tpl.render(tpl.Rules["TrustedAccount"]); !strings.Contains(got, `"Fn::Equals":["${AWS::AccountId}","210987654321"]`) {
		t.Errorf("template rule TrustedAccount = %s, want an assertion that the stack deploys to account 210987654321", got)
	}
	var rule string
	for id, r := range tpl.Resources {
		if r.Type == "AWS::Events::Rule" && rule == "" && tpl.alias[id] != "QueueControlAlarm" {
			rule = tpl.arn(id)
		}
	}
	queue := tpl.arn(findID(t, tpl, "Queue"))
	policy := tpl.policyOf(t, "AWS::SQS::QueuePolicy", "Queues", "${Queue}")
	send := func(name, source, account string) simRequest {
		return simRequest{Name: name, Principal: "sns.amazonaws.com", Action: "sqs:SendMessage", Resource: queue, AccountID: simAccount,
			Context: map[string]any{"aws:SecureTransport": "true", "aws:SourceArn": source, "aws:SourceAccount": account}}
	}
	rq := []simRequest{send("foreign topic", foreignTopic, "210987654321"), send("the stack's rule", rule, simAccount)}
	rq[1].Principal = "events.amazonaws.com"
	got := simulate(t, policy, rq)
	want := map[string]string{"foreign topic": "ExplicitlyDenied", "the stack's rule": "Allowed"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("queue policy decisions (-want +got):\n%s", diff)
	}
	own := testProps(t)
	own.SNSTopicARNs = []string{ownTopic}
	if r, ok := synth(t, own).Rules["TrustedAccount"]; !ok {
		t.Errorf("no TrustedAccount rule for a topic of account 123456789012")
	} else if got := tpl.render(r); !strings.Contains(got, "123456789012") {
		t.Errorf("TrustedAccount = %s, want account 123456789012", got)
	}
}

// TestDeployerRoleNamed: with deployerRoleArn, that role alone is the
// deployer exempt from the queue-control deny, in the CDK stack (not the
// bootstrap execution role every stack of the account shares) and in the
// standalone template (not CloudFormation acting for any caller).
func TestDeployerRoleNamed(t *testing.T) {
	const deployer = "arn:aws:iam::" + simAccount + ":role/drainpipe-deployer"
	p := testProps(t)
	p.DeployerRoleARN = deployer
	standalone, err := NewStandalone(awscdk.NewApp(nil), "Standalone", p)
	if err != nil {
		t.Fatalf("NewStandalone: %v", err)
	}
	sqsAll := map[string]any{"Version": "2012-10-17", "Statement": []any{map[string]any{"Effect": "Allow", "Action": "sqs:*", "Resource": "*"}}}
	for name, tpl := range map[string]template{"stack": synth(t, p), "standalone": templateOf(t, standalone)} {
		queue := tpl.arn(findID(t, tpl, "Queue"))
		policy := tpl.policyOf(t, "AWS::SQS::QueuePolicy", "Queues", "${Queue}")
		ask := func(who, principal string, viaCFN bool) simRequest {
			ctx := map[string]any{"aws:SecureTransport": "true", "aws:PrincipalArn": principal, "aws:PrincipalAccount": simAccount}
			if viaCFN {
				ctx["aws:CalledVia"] = []string{cfnService}
			}
			return simRequest{Name: who, Principal: principal, Action: "sqs:SetQueueAttributes", Resource: queue, AccountID: simAccount,
				Context: ctx, IdentityPolicies: []any{sqsAll}}
		}
		got := simulate(t, policy, []simRequest{
			ask("named deployer", deployer, true),
			ask("bootstrap execution role", execRole, true),
			ask("another role through CloudFormation", "arn:aws:iam::"+simAccount+":role/admin", true),
		})
		want := map[string]string{"named deployer": "Allowed", "bootstrap execution role": "ExplicitlyDenied",
			"another role through CloudFormation": "ExplicitlyDenied"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: SetQueueAttributes decisions (-want +got):\n%s", name, diff)
		}
	}
	p.DeployerRoleARN = "arn:aws:iam::210987654321:role/deployer"
	p.SenderRoleARNs = []string{redriveRole}
	checkValidate(t, p, "deployerRoleArn in 210987654321")
	p.DeployerRoleARN = "arn:aws:iam::123456789012:user/alice"
	checkValidate(t, p, `deployerRoleArn: "arn:aws:iam::123456789012:user/alice" is not an IAM role ARN`)
}
