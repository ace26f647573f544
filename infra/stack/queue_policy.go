package stack

import (
	"fmt"
	"slices"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// queueName is the fixed name of the queue with suffix ("-queue" for the
// work queue): the instance's, or for a template deployed under names
// chosen later, the deployed stack's. The dead-letter queue's
// RedriveAllowPolicy must name the queue's ARN while the queue's
// RedrivePolicy names the dead-letter queue's: a generated name would make
// that a dependency cycle, a fixed one is known to both. SQS names are at
// most 80 characters.
func queueName(s constructs.Construct, p Props, suffix string) string {
	if p.StackNamedQueue {
		return *awscdk.Fn_Join(jsii.String(""), &[]*string{awscdk.Aws_STACK_NAME(), jsii.String(suffix)})
	}
	name := instanceName(s)
	if len(name) > sqsMaxName-len(suffix) {
		name = name[:sqsMaxName-len(suffix)]
	}
	return name + suffix
}

// sqsMaxName is the longest queue name SQS takes.
const sqsMaxName = 80

// instanceName names one Drainpipe: the stack's name, and the construct's
// id after it when built by NewConstruct, since two constructs in one
// stack need two names; the stack's own (stack.New) keeps the name it has
// always had.
func instanceName(s constructs.Construct) string {
	name := *awscdk.Stack_Of(s).StackName()
	if !*awscdk.Stack_IsStack(s) {
		name += "-" + *s.Node().Id()
	}
	return name
}

// metricsStack is the value of the function's `stack` metric dimension
// (DRAINPIPE_METRICS_STACK): the instance's name, or for a template
// deployed under names chosen later, the deployed stack's.
func metricsStack(s constructs.Construct, p Props) *string {
	if p.StackNamedQueue {
		return awscdk.Aws_STACK_NAME()
	}
	return jsii.String(instanceName(s))
}

// queueARN is the ARN of the queue named name, without referring to it.
func queueARN(s constructs.Construct, name string) *string {
	return awscdk.Stack_Of(s).FormatArn(&awscdk.ArnComponents{
		Service: jsii.String("sqs"), Resource: jsii.String(name), ArnFormat: awscdk.ArnFormat_NO_RESOURCE_NAME,
	})
}

// allowRedriveFrom lets only the named queues use dlq as their dead-letter
// queue.
func allowRedriveFrom(dlq awssqs.Queue, sourceARNs ...*string) {
	dlq.Node().DefaultChild().(awssqs.CfnQueue).AddPropertyOverride(jsii.String("RedriveAllowPolicy"), map[string]any{
		"redrivePermission": "byQueue",
		"sourceQueueArns":   sourceARNs,
	})
}

// denyOtherSenders adds to each queue an explicit Deny of sqs:SendMessage
// to everyone but the stack's rules and subscribed topics (EventBridge and
// SNS send with the rule or topic as aws:SourceArn, which no caller can
// set), the lifecycle notification role
// when there is one, and the roles the operator lists. An explicit Deny
// beats any identity policy, so `sqs:*` on `*` in the account can no
// longer make Drainpipe drain a node. A condition key absent from a
// request makes ArnNotEquals true: a caller is denied only when neither
// exemption matches.
func denyOtherSenders(p Props, rules []awsevents.Rule, topics []*string, notifyRole awsiam.IRole, queues ...awssqs.Queue) {
	var sources []*string
	for _, r := range rules {
		sources = append(sources, r.RuleArn())
	}
	sources = append(sources, topics...)
	var principals []*string
	if notifyRole != nil {
		principals = append(principals, notifyRole.RoleArn())
	}
	for _, r := range append(slices.Clone(p.SenderRoleARNs), p.OperatorRoleARNs...) {
		principals = append(principals, jsii.String(r))
	}
	notEquals := map[string]any{"aws:SourceArn": sources}
	if len(principals) > 0 {
		notEquals["aws:PrincipalArn"] = principals
	}
	for i, q := range queues {
		if len(topics) > 0 {
			denyForeignSources(q, i)
		}
		q.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:        jsii.String(fmt.Sprintf("DenyOtherSenders%d", i)),
			Effect:     awsiam.Effect_DENY,
			Principals: &[]awsiam.IPrincipal{awsiam.NewAnyPrincipal()},
			Actions:    jsii.Strings("sqs:SendMessage"),
			Resources:  &[]*string{q.QueueArn()},
			Conditions: &map[string]any{"ArnNotEquals": notEquals},
		}))
	}
}

// denyForeignSources denies sending on behalf of a resource of another
// account than the queue's (aws:SourceAccount, which SNS and EventBridge
// set and no caller can): a subscribed topic of another account, which a
// stack whose account is unknown at synth cannot refuse, feeds nothing.
// Requests without the key (a role's own) are left to the other
// statements.
func denyForeignSources(q awssqs.Queue, i int) {
	q.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String(fmt.Sprintf("DenyForeignSources%d", i)),
		Effect:     awsiam.Effect_DENY,
		Principals: &[]awsiam.IPrincipal{awsiam.NewAnyPrincipal()},
		Actions:    jsii.Strings("sqs:SendMessage"),
		Resources:  &[]*string{q.QueueArn()},
		Conditions: &map[string]any{
			"Null":            map[string]any{"aws:SourceAccount": "false"},
			"StringNotEquals": map[string]any{"aws:SourceAccount": awscdk.Stack_Of(q).Account()},
		},
	}))
}
