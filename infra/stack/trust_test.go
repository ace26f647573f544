package stack

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
	"github.com/google/go-cmp/cmp"
)

const (
	redriveRole  = "arn:aws:iam::123456789012:role/oncall-redrive"
	operatorRole = "arn:aws:iam::123456789012:role/oncall"
)

// sendDeny returns the queue's explicit Deny of sqs:SendMessage, with its
// condition decoded.
func sendDeny(t *testing.T, tpl template, q string) map[string]map[string][]string {
	t.Helper()
	var found []statement
	for _, s := range tpl.statements() {
		// The foreign sources' deny (aws:SourceAccount) is TestOneForeignAccountRefused's.
		if s.Where == "QueuePolicy(${"+q+"})" && s.Effect == "Deny" && slices.Equal(s.Actions, []string{"sqs:SendMessage"}) &&
			!strings.Contains(s.Condition, "aws:SourceAccount") {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s: %d Deny statements of sqs:SendMessage, want 1", q, len(found))
	}
	s := found[0]
	if s.Principal != `{"AWS":"*"}` || !slices.Equal(s.Resources, []string{"${" + q + ".Arn}"}) {
		t.Errorf("%s: deny principal %s resources %v, want everyone on the queue", q, s.Principal, s.Resources)
	}
	var cond map[string]map[string][]string
	if err := json.Unmarshal([]byte(s.Condition), &cond); err != nil {
		t.Fatalf("%s: condition %s: %v", q, s.Condition, err)
	}
	return cond
}

// TestQueuesDenySendingToOthers (issue 15, 1): an identity policy allowing
// sqs:SendMessage on * must not let its holder feed the queue. Both queues
// deny SendMessage unless it comes from one of the stack's rules (by
// aws:SourceArn), the lifecycle notification role or a listed role.
func TestQueuesDenySendingToOthers(t *testing.T) {
	for _, tt := range []struct {
		name       string
		change     func(*Props)
		principals []string
	}{
		{"rules only", func(*Props) {}, nil},
		{"notification role and listed role", func(p *Props) {
			p.ASGNotificationRole, p.SenderRoleARNs = true, []string{redriveRole}
		}, []string{"${Role.Arn}", redriveRole}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := testProps(t)
			tt.change(&p)
			tpl := synth(t, p)
			var rules []string
			for range tpl.ofType("AWS::Events::Rule") {
				rules = append(rules, "${Rule.Arn}")
			}
			for _, q := range []string{"Queue", "DeadLetterQueue", "CordonQueue"} {
				cond := sendDeny(t, tpl, q)
				want := map[string]map[string][]string{"ArnNotEquals": {"aws:SourceArn": rules}}
				principals := tt.principals
				if q == "CordonQueue" {
					// The rules that copy their notices: not the sweep's;
					// lifecycle hooks notify the work queue only.
					want["ArnNotEquals"]["aws:SourceArn"] = rules[1:]
					principals = slices.DeleteFunc(slices.Clone(principals), func(p string) bool { return p == "${Role.Arn}" })
				}
				if principals != nil {
					want["ArnNotEquals"]["aws:PrincipalArn"] = principals
				}
				if diff := cmp.Diff(want, cond); diff != "" {
					t.Errorf("%s deny condition (-want +got):\n%s", q, diff)
				}
			}
		})
	}
}

// TestDeadLetterRedriveAllowPolicy: only our queues may use the DLQ.
func TestDeadLetterRedriveAllowPolicy(t *testing.T) {
	tpl := synth(t, testProps(t))
	queue, cordon, dlq := tpl.byAlias(t, "Queue"), tpl.byAlias(t, "CordonQueue"), tpl.byAlias(t, "DeadLetterQueue")
	got := tpl.render(dlq.Properties["RedriveAllowPolicy"])
	name, _ := queue.Properties["QueueName"].(string)
	cordonName, _ := cordon.Properties["QueueName"].(string)
	const arn = "arn:${AWS::Partition}:sqs:${AWS::Region}:${AWS::AccountId}:"
	want := `{"redrivePermission":"byQueue","sourceQueueArns":["` + arn + name + `","` + arn + cordonName + `"]}`
	if name == "" || cordonName == "" || got != want {
		t.Errorf("RedriveAllowPolicy = %s (queue names %q, %q), want %s", got, name, cordonName, want)
	}
}

// TestRulesHardened (issue 15, 9): rules match only the stack's account,
// and EventBridge gives up on an event no later than the function would
// call it stale.
func TestRulesHardened(t *testing.T) {
	for _, age := range []time.Duration{time.Hour, 10 * time.Minute, 0} {
		t.Run(age.String(), func(t *testing.T) {
			p := testProps(t)
			p.MaxEventAge = age
			tpl := synth(t, p)
			wantAge := age.Seconds()
			if age == 0 {
				wantAge = 86400 // off in the function: EventBridge's maximum
			}
			for _, r := range tpl.ofType("AWS::Events::Rule") {
				pattern, _ := r.Properties["EventPattern"].(map[string]any)
				// The sweep's schedule rule matches nothing: its events are
				// its own, in the stack's account.
				_, schedule := r.Properties["ScheduleExpression"]
				if got := tpl.render(pattern["account"]); got != "${AWS::AccountId}" && !schedule {
					t.Errorf("rule pattern account = %s, want the stack's account", got)
				}
				target, _ := asList(r.Properties["Targets"])[0].(map[string]any)
				retry, _ := target["RetryPolicy"].(map[string]any)
				if number(retry["MaximumEventAgeInSeconds"]) != wantAge {
					t.Errorf("target retry policy %v, want MaximumEventAgeInSeconds %v", retry, wantAge)
				}
			}
			vars := tpl.byAlias(t, "Function").Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
			if got, want := vars["DRAINPIPE_MAX_EVENT_AGE"], fmt.Sprintf("%ds", int(age.Seconds())); got != want {
				t.Errorf("DRAINPIPE_MAX_EVENT_AGE = %v, want %s", got, want)
			}
		})
	}
}

// TestAcceptWired (issue 15, 4): the function accepts exactly the shapes
// the stack wires: EventBridge, and direct Auto Scaling notifications only
// with the notification role.
func TestAcceptWired(t *testing.T) {
	for _, on := range []bool{false, true} {
		p := testProps(t)
		p.ASGNotificationRole = on
		vars := synth(t, p).byAlias(t, "Function").Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
		want := "eventbridge"
		if on {
			want = "eventbridge,asg-direct"
		}
		if got := vars["DRAINPIPE_ACCEPT"]; got != want {
			t.Errorf("notification role %v: DRAINPIPE_ACCEPT = %v, want %s", on, got, want)
		}
	}
}

// TestReservedConcurrency (issue 15, 8): a spot wave is not throttled by
// other functions of the account, nor drains by cordons.
func TestReservedConcurrency(t *testing.T) {
	p := testProps(t)
	p.MaxConcurrency = 40
	if got := number(synth(t, p).byAlias(t, "Function").Properties["ReservedConcurrentExecutions"]); got != float64(40+defaultCordonConcurrency) {
		t.Errorf("default reserved concurrency = %v, want maxConcurrency 40 + cordonConcurrency %d", got, defaultCordonConcurrency)
	}
	p.ReservedConcurrency = 60
	if got := number(synth(t, p).byAlias(t, "Function").Properties["ReservedConcurrentExecutions"]); got != 60 {
		t.Errorf("reserved concurrency = %v, want 60", got)
	}
	p.ReservedConcurrency = -1 // an account too small to reserve any
	if got, ok := synth(t, p).byAlias(t, "Function").Properties["ReservedConcurrentExecutions"]; ok {
		t.Errorf("reserved concurrency -1 = %v, want none", got)
	}
}

// TestVPCPlacement (issue 15, 6): subnets and security groups by id, no
// lookup, and the ENI permissions Lambda needs to place the function.
func TestVPCPlacement(t *testing.T) {
	p := testProps(t)
	p.SubnetIDs, p.SecurityGroupIDs = []string{"subnet-0123456789abcdef0", "subnet-0fedcba9876543210"}, []string{"sg-0123456789abcdef0"}
	tpl := synth(t, p)
	got := tpl.render(tpl.byAlias(t, "Function").Properties["VpcConfig"])
	want := `{"SecurityGroupIds":["sg-0123456789abcdef0"],"SubnetIds":["subnet-0123456789abcdef0","subnet-0fedcba9876543210"]}`
	if got != want {
		t.Errorf("VpcConfig = %s, want %s", got, want)
	}
	var eni []string
	for _, s := range tpl.statements() {
		if s.Where == "Policy(${FunctionRole})" && slices.Contains(s.Actions, "ec2:CreateNetworkInterface") {
			eni = s.Actions
		}
	}
	wantENI := []string{"ec2:AssignPrivateIpAddresses", "ec2:CreateNetworkInterface", "ec2:DeleteNetworkInterface",
		"ec2:DescribeNetworkInterfaces", "ec2:DescribeSubnets", "ec2:UnassignPrivateIpAddresses"}
	if diff := cmp.Diff(wantENI, eni); diff != "" {
		t.Errorf("ENI permissions (-want +got):\n%s", diff)
	}
	// Only Lambda, placing the function, may use them; the function's own
	// code (whose calls carry lambda:SourceFunctionArn) may not.
	var denied bool
	for _, s := range tpl.statements() {
		if s.Where == "Policy(${FunctionRole})" && s.Effect == "Deny" && cmp.Equal(s.Actions, wantENI) {
			denied = s.Condition == `{"Null":{"lambda:SourceFunctionArn":"false"}}` && strings.Join(s.Resources, ",") == "*"
		}
	}
	if !denied {
		t.Error("the ENI permissions are not denied to the function's own code (lambda:SourceFunctionArn present)")
	}
	if v, ok := synth(t, testProps(t)).byAlias(t, "Function").Properties["VpcConfig"]; ok {
		t.Errorf("VpcConfig without subnets = %v, want none", v)
	}
}

// TestWebhookKMSKey (issue 15, 10): a webhook secret under a customer
// managed key may be decrypted only through its service.
func TestWebhookKMSKey(t *testing.T) {
	const key = "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
	for _, tt := range []struct{ secret, service string }{
		{"arn:aws:secretsmanager:eu-west-1:123456789012:secret:drainpipe/webhook", "secretsmanager"},
		{"arn:aws:ssm:eu-west-1:123456789012:parameter/drainpipe/webhook", "ssm"},
	} {
		p := testProps(t)
		p.WebhookSecretARN, p.WebhookKMSKeyARN = tt.secret, key
		var got []statement
		for _, s := range synth(t, p).statements() {
			if s.Where == "Policy(${FunctionRole})" && strings.HasPrefix(s.Actions[0], "kms:") {
				s.Where = ""
				got = append(got, s)
			}
		}
		want := []statement{{Effect: "Allow", Actions: []string{"kms:Decrypt"}, Resources: []string{key},
			Condition: `{"StringEquals":{"kms:ViaService":"` + tt.service + `.eu-west-1.amazonaws.com"}}`}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: kms statements (-want +got):\n%s", tt.service, diff)
		}
	}
}

func TestValidateTrust(t *testing.T) {
	for _, tt := range []struct {
		name   string
		change func(*Props)
		want   string
	}{
		{"notification role without groups", func(p *Props) { p.ASGNotificationRole, p.ASGNames, p.ASGNamePrefix = true, nil, "" }, "asgNotificationRole"},
		{"notification role with groups", func(p *Props) { p.ASGNotificationRole = true }, ""},
		{"sender not a role", func(p *Props) { p.SenderRoleARNs = []string{"arn:aws:iam::123456789012:user/bob"} }, "senderRoleArns"},
		{"sender wildcard", func(p *Props) { p.SenderRoleARNs = []string{"arn:aws:iam::123456789012:role/*"} }, "senderRoleArns"},
		{"sender ok", func(p *Props) { p.SenderRoleARNs = []string{redriveRole} }, ""},
		{"subnets without groups", func(p *Props) { p.SubnetIDs = []string{"subnet-0123456789abcdef0"} }, "securityGroupIds"},
		{"groups without subnets", func(p *Props) { p.SecurityGroupIDs = []string{"sg-0123456789abcdef0"} }, "subnetIds"},
		{"bad subnet", func(p *Props) {
			p.SubnetIDs, p.SecurityGroupIDs = []string{"subnet-xyz"}, []string{"sg-0123456789abcdef0"}
		}, "subnetIds"},
		{"bad group", func(p *Props) {
			p.SubnetIDs, p.SecurityGroupIDs = []string{"subnet-0123456789abcdef0"}, []string{"default"}
		}, "securityGroupIds"},
		{"reserved below the event source", func(p *Props) { p.ReservedConcurrency = 5 }, "reservedConcurrency"},
		{"reserved negative", func(p *Props) { p.ReservedConcurrency = -2 }, "reservedConcurrency"},
		{"reserved none", func(p *Props) { p.ReservedConcurrency = -1 }, ""},
		// Lambda keeps 100 of the account's 1000 (default) executions unreserved.
		{"reserved over what an account can reserve", func(p *Props) { p.ReservedConcurrency = 950 }, "reserve at most 900"},
		{"reserved all an account can", func(p *Props) { p.ReservedConcurrency = 900 }, ""},
		{"maxConcurrency reserved by default, too many", func(p *Props) { p.MaxConcurrency = 1000 }, "reservedConcurrency: reserving 1020 (maxConcurrency + cordonConcurrency"},
		{"maxConcurrency not reserved", func(p *Props) { p.MaxConcurrency, p.ReservedConcurrency = 1000, -1 }, ""},
		{"raised account limit", func(p *Props) { p.MaxConcurrency, p.AccountConcurrency = 1000, 5000 }, ""},
		{"small account", func(p *Props) { p.AccountConcurrency = 50 }, "reserve at most 0"},
		{"account limit zero", func(p *Props) { p.AccountConcurrency = 0 }, "accountConcurrencyLimit"},
		// A role of another account cannot send: the queue policy allows none.
		{"senders of two accounts", func(p *Props) {
			p.SenderRoleARNs = []string{redriveRole, "arn:aws:iam::210987654321:role/redrive"}
		}, "senderRoleArns: roles of 2 accounts (123456789012, 210987654321): only roles of the stack's own account can send"},
		{"event age fraction", func(p *Props) { p.MaxEventAge = 90500 * time.Millisecond }, "maxEventAgeSeconds"},
		{"event age too short", func(p *Props) { p.MaxEventAge = 30 * time.Second }, "maxEventAgeSeconds"},
		{"event age too long", func(p *Props) { p.MaxEventAge = 25 * time.Hour }, "maxEventAgeSeconds"},
		{"event age off", func(p *Props) { p.MaxEventAge = 0 }, ""},
		{"env overriding the event age", func(p *Props) { p.Env = map[string]string{"DRAINPIPE_MAX_EVENT_AGE": "2h"} }, "set by the stack"},
		{"env overriding accept", func(p *Props) { p.Env = map[string]string{"DRAINPIPE_ACCEPT": "sns"} }, "set by the stack"},
		{"kms key without secret", func(p *Props) {
			p.WebhookKMSKeyARN = "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
		}, "webhookKmsKeyArn"},
		{"kms alias", func(p *Props) {
			p.WebhookSecretARN = "arn:aws:ssm:eu-west-1:123456789012:parameter/x"
			p.WebhookKMSKeyARN = "arn:aws:kms:eu-west-1:123456789012:alias/webhook"
		}, "webhookKmsKeyArn"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := testProps(t)
			tt.change(&p)
			checkValidate(t, p, tt.want)
		})
	}
}

func TestFromContextTrustKeys(t *testing.T) {
	got, err := FromContext(func(k string) any {
		return map[string]any{
			"senderRoleArns": redriveRole, "operatorRoleArns": []any{operatorRole}, "accountConcurrencyLimit": 3000.0,
			"alarmDrainBlockedSeconds": "1800", "subnetIds": "subnet-0123456789abcdef0,subnet-0fedcba9876543210",
			"securityGroupIds": []any{"sg-0123456789abcdef0"}, "reservedConcurrency": "25", "maxEventAgeSeconds": 600.0,
			"webhookKmsKeyArn": "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab",
		}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	want := Defaults()
	want.SenderRoleARNs, want.OperatorRoleARNs = []string{redriveRole}, []string{operatorRole}
	want.AccountConcurrency, want.AlarmDrainBlocked = 3000, 30*time.Minute
	want.SubnetIDs = []string{"subnet-0123456789abcdef0", "subnet-0fedcba9876543210"}
	want.SecurityGroupIDs = []string{"sg-0123456789abcdef0"}
	want.ReservedConcurrency, want.MaxEventAge = 25, 10*time.Minute
	want.WebhookKMSKeyARN = "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("props (-want +got):\n%s", diff)
	}
}

// checkValidate checks that p is valid (want "") or that its validation
// error contains want.
func checkValidate(t *testing.T, p Props, want string) {
	t.Helper()
	err := p.Validate()
	switch {
	case want == "" && err != nil:
		t.Errorf("Validate() = %v, want nil", err)
	case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
		t.Errorf("Validate() = %v, want an error containing %q", err, want)
	}
}

// TestSenderOfAnotherAccountRefused: when the stack's account is known at
// synth, a sender role of another account fails it (such a role cannot
// send: the queue policy allows no other account).
func TestSenderOfAnotherAccountRefused(t *testing.T) {
	env := &awscdk.StackProps{Env: &awscdk.Environment{Account: jsii.String("123456789012"), Region: jsii.String("eu-west-1")}}
	p := testProps(t)
	p.SenderRoleARNs = []string{"arn:aws:iam::210987654321:role/redrive"}
	_, err := New(awscdk.NewApp(nil), "Test", p, env)
	if err == nil || !strings.Contains(err.Error(), "senderRoleArns: roles of account 210987654321, not the stack's (123456789012)") {
		t.Errorf("New with a foreign sender: error %v, want one refusing account 210987654321", err)
	}
	p.SenderRoleARNs = []string{redriveRole}
	if _, err := New(awscdk.NewApp(nil), "Test", p, env); err != nil {
		t.Errorf("New with a sender of the stack's account: %v", err)
	}
}

// TestQueuePolicySizeChecked: a queue policy over SQS's 8,192 bytes would
// fail the deploy halfway; synth refuses it.
func TestQueuePolicySizeChecked(t *testing.T) {
	roles := func(n int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("arn:aws:iam::123456789012:role/drainpipe-dead-letter-redrive-for-the-platform-team-%03d", i))
		}
		return out
	}
	p := testProps(t)
	p.SenderRoleARNs, p.OperatorRoleARNs = roles(40), roles(40)
	_, err := New(awscdk.NewApp(nil), "Test", p, nil)
	if err == nil || !strings.Contains(err.Error(), "over SQS's 8192-byte limit") {
		t.Errorf("New with 80 roles: error %v, want the queue policy refused as too big", err)
	}
	p.SenderRoleARNs, p.OperatorRoleARNs = roles(3), roles(3)
	if _, err := New(awscdk.NewApp(nil), "Test", p, nil); err != nil {
		t.Errorf("New with 6 roles: %v", err)
	}
}
