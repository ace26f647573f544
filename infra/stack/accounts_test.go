package stack

import (
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
)

const (
	foreignRole  = "arn:aws:iam::210987654321:role/oncall"
	foreignTopic = "arn:aws:sns:eu-west-1:210987654321:lifecycle"
	ownTopic     = "arn:aws:sns:eu-west-1:123456789012:lifecycle"
)

// TestTrustedAccountsValidated: operator roles and subscribed topics are
// held to one account, as sender roles are, even when the stack's account
// is unknown at synth; every problem is listed at once.
func TestTrustedAccountsValidated(t *testing.T) {
	for _, tt := range []struct {
		name   string
		change func(*Props)
		want   []string
	}{
		{"operators of two accounts", func(p *Props) { p.OperatorRoleARNs = []string{operatorRole, foreignRole} },
			[]string{"operatorRoleArns: roles of 2 accounts (123456789012, 210987654321): only roles of the stack's own account may operate"}},
		{"topics of two accounts", func(p *Props) { p.SNSTopicARNs = []string{ownTopic, foreignTopic} },
			[]string{"snsTopicArns: topics of 2 accounts (123456789012, 210987654321): only topics of the stack's own account"}},
		{"operator and sender of different accounts", func(p *Props) {
			p.SenderRoleARNs, p.OperatorRoleARNs = []string{redriveRole}, []string{foreignRole}
		}, []string{"senderRoleArns in 123456789012; operatorRoleArns in 210987654321: ARNs of 2 accounts"}},
		{"every problem at once", func(p *Props) {
			p.SenderRoleARNs = []string{redriveRole, "arn:aws:iam::210987654321:role/redrive"}
			p.OperatorRoleARNs = []string{operatorRole, foreignRole}
			p.SNSTopicARNs = []string{ownTopic, foreignTopic}
		}, []string{"senderRoleArns: roles of 2 accounts", "operatorRoleArns: roles of 2 accounts", "snsTopicArns: topics of 2 accounts"}},
		{"all of one account", func(p *Props) {
			p.SenderRoleARNs, p.OperatorRoleARNs, p.SNSTopicARNs = []string{redriveRole}, []string{operatorRole}, []string{ownTopic}
		}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := testProps(t)
			tt.change(&p)
			err := p.Validate()
			if tt.want == nil && err != nil {
				t.Fatalf("Validate() = %v, want nil", err)
			}
			for _, w := range tt.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %v, want it to contain %q", err, w)
				}
			}
		})
	}
}

// TestForeignOperatorAndTopicRefused: with the stack's account known at
// synth, an operator role or a topic of another account fails it (an
// operator role is allowed to send to the queue; a topic's publishers feed
// the function), both named in one error.
func TestForeignOperatorAndTopicRefused(t *testing.T) {
	env := &awscdk.StackProps{Env: &awscdk.Environment{Account: jsii.String("123456789012"), Region: jsii.String("eu-west-1")}}
	p := testProps(t)
	p.OperatorRoleARNs, p.SNSTopicARNs = []string{foreignRole}, []string{foreignTopic}
	_, err := New(awscdk.NewApp(nil), "Test", p, env)
	for _, want := range []string{
		"operatorRoleArns: roles of account 210987654321, not the stack's (123456789012)",
		"snsTopicArns: topics of account 210987654321, not the stack's (123456789012)",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("New with a foreign operator and topic: error %v, want it to contain %q", err, want)
		}
	}
	p.OperatorRoleARNs, p.SNSTopicARNs = []string{operatorRole}, []string{ownTopic}
	if _, err := New(awscdk.NewApp(nil), "Test", p, env); err != nil {
		t.Errorf("New with an operator and topic of the stack's account: %v", err)
	}
}

// TestOperatorAllowsOwnAccountOnly: in a stack whose account is unknown at
// synth, the operators' Allows still hold only for principals of the
// account the stack is deployed to.
func TestOperatorAllowsOwnAccountOnly(t *testing.T) {
	p := testProps(t)
	p.OperatorRoleARNs = []string{operatorRole}
	tpl := synth(t, p)
	n := 0
	for _, s := range tpl.statements() {
		if s.Effect != "Allow" || !strings.Contains(s.Principal, operatorRole) {
			continue
		}
		n++
		if want := `{"StringEquals":{"aws:PrincipalAccount":"${AWS::AccountId}"}}`; s.Condition != want {
			t.Errorf("%s: operator Allow of %v conditioned %s, want %s", s.Where, s.Actions, s.Condition, want)
		}
	}
	if n != 3 {
		t.Errorf("%d operator Allow statements, want 3 (redrive source, and the work and cordon queues as targets)", n)
	}
}
