package stack

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
)

// controlActions rewire a queue rather than use it: one call can delay
// every notice (DelaySeconds), expire it (MessageRetentionPeriod), send it
// elsewhere (RedrivePolicy), open the queue to others (Policy,
// AddPermission) or delete the queue.
var controlActions = []string{
	"sqs:SetQueueAttributes", "sqs:DeleteQueue", "sqs:AddPermission", "sqs:RemovePermission", "sqs:TagQueue", "sqs:UntagQueue",
}

// moveActions start and cancel SQS's message-move tasks: one moves every
// dead-lettered notice back into the queue (replaying old interruptions),
// the other stops an operator's redrive halfway. `drainpipe dlq redrive`
// needs both, for the operator roles and the named admins only.
var moveActions = []string{"sqs:StartMessageMoveTask", "sqs:CancelMessageMoveTask"}

// cfnService is the service principal CloudFormation acts as when it
// deploys with the caller's own credentials (no execution role): the
// requests it makes then carry it in aws:CalledVia.
const cfnService = "cloudformation.amazonaws.com"

// guardQueueControl denies the control actions on every queue to everyone
// but the account's root user, the principals of Props.QueueAdminARNs and
// whoever deploys the stack, so an `sqs:*` admin cannot quietly rewire
// them. The deployer is Props.DeployerRoleARN when set; else CloudFormation's execution role when the stack's
// synthesizer names one (CDK's bootstrap: cdk-<qualifier>-cfn-exec-role),
// which then alone may update and delete the queues; otherwise (the
// standalone template, deployed with the caller's credentials)
// CloudFormation acting for any caller, since who deploys is not known
// at synth. A condition key absent from a request makes ArnNotEquals and
// ForAllValues true: a caller is denied unless an exemption matches.
func guardQueueControl(c *Construct) {
	stack := awscdk.Stack_Of(c.Scope)
	principals := []*string{stack.FormatArn(&awscdk.ArnComponents{
		Service: jsii.String("iam"), Region: jsii.String(""), Resource: jsii.String("root"), ArnFormat: awscdk.ArnFormat_NO_RESOURCE_NAME,
	})}
	notEquals := map[string]any{}
	cond := map[string]any{"ArnNotEquals": notEquals}
	if d := c.Props.DeployerRoleARN; d != "" {
		principals = append(principals, jsii.String(d))
	} else if exec := executionRole(stack); exec != nil {
		principals = append(principals, exec)
	} else {
		cond["ForAllValues:StringNotEquals"] = map[string]any{"aws:CalledVia": []string{cfnService}}
	}
	for _, a := range c.Props.QueueAdminARNs {
		principals = append(principals, jsii.String(a))
	}
	notEquals["aws:PrincipalArn"] = principals
	// No deployer moves messages: the move tasks' exemptions are the root
	// user, the named admins and the operators, who redrive.
	movers := slices.Clone(principals[:1])
	for _, a := range append(slices.Clone(c.Props.QueueAdminARNs), c.Props.OperatorRoleARNs...) {
		movers = append(movers, jsii.String(a))
	}
	for i, q := range c.queues() {
		denyOnQueue(q, fmt.Sprintf("DenyQueueControl%d", i), controlActions, cond)
		denyOnQueue(q, fmt.Sprintf("DenyMessageMove%d", i), moveActions, map[string]any{"ArnNotEquals": map[string]any{"aws:PrincipalArn": movers}})
	}
}

// denyOnQueue adds to q's policy an explicit Deny of actions on q to
// every principal, under cond.
func denyOnQueue(q awssqs.Queue, sid string, actions []string, cond map[string]any) {
	q.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String(sid),
		Effect:     awsiam.Effect_DENY,
		Principals: &[]awsiam.IPrincipal{awsiam.NewAnyPrincipal()},
		Actions:    jsii.Strings(actions...),
		Resources:  &[]*string{q.QueueArn()},
		Conditions: &cond,
	}))
}

// executionRole is the ARN of the role CloudFormation deploys the stack
// with, as the template can name it, or nil when the synthesizer names
// none. Only CDK's default synthesizer is asked: its subclasses (the
// standalone template's bootstrapless one among them) may have no role,
// and then its getter throws. It gives the ARN with the bootstrap
// qualifier filled in and ${AWS::…} placeholders where the stack's
// environment is unknown, which Fn::Sub resolves at deploy.
func executionRole(stack awscdk.Stack) *string {
	syn := stack.Synthesizer()
	if reflect.TypeOf(syn) != reflect.TypeOf(awscdk.NewDefaultStackSynthesizer(nil)) {
		return nil
	}
	arn := syn.(awscdk.DefaultStackSynthesizer).CloudFormationExecutionRoleArn()
	if arn == nil || *arn == "" {
		return nil
	}
	if strings.Contains(*arn, "${") {
		return awscdk.Fn_Sub(arn, nil)
	}
	return arn
}

// queueControlAlarm notifies the alarm topic whenever anyone, the
// deployer and named admins included, calls a control action on any
// queue: a CloudTrail management event through EventBridge (it needs a
// trail recording management events in the region). The queue URL a
// caller gives may name either endpoint form, so only its path is
// matched. The topic the stack creates lets EventBridge publish; a
// configured one (alarmTopicArn) must allow it (docs/security.md).
func queueControlAlarm(c *Construct) awsevents.Rule {
	account := awscdk.Stack_Of(c.Scope).Account()
	var urls, arns []any
	for _, q := range c.queues() {
		path := awscdk.Fn_Join(jsii.String(""), &[]*string{jsii.String("/"), account, jsii.String("/"), q.QueueName()})
		urls = append(urls, map[string]any{"suffix": path})
		arns = append(arns, q.QueueArn())
	}
	rule := awsevents.NewRule(c.Scope, jsii.String("QueueControlAlarm"), &awsevents.RuleProps{
		Description: jsii.String("Drainpipe: someone changed, deleted, re-permissioned or moved messages of Drainpipe's queues (see the QueueControlAlarm runbook)"),
		EventPattern: &awsevents.EventPattern{
			Source:     jsii.Strings("aws.sqs"),
			DetailType: jsii.Strings("AWS API Call via CloudTrail"),
			// A move task names its queues by ARN; its cancellation only by
			// an opaque task handle, so every cancellation in the account
			// and region is matched.
			Detail: &map[string]any{
				"eventSource": []string{"sqs.amazonaws.com"},
				"$or": []any{
					map[string]any{"eventName": names(controlActions), "requestParameters": map[string]any{"queueUrl": urls}},
					map[string]any{"eventName": names(moveActions[:1]), "requestParameters": map[string]any{"sourceArn": arns}},
					map[string]any{"eventName": names(moveActions[:1]), "requestParameters": map[string]any{"destinationArn": arns}},
					map[string]any{"eventName": names(moveActions[1:])},
				},
			},
		},
	})
	field := func(path string) string { return *awsevents.EventField_FromPath(jsii.String(path)) }
	rule.AddTarget(awseventstargets.NewSnsTopic(c.AlarmTopic, &awseventstargets.SnsTopicProps{
		Message: awsevents.RuleTargetInput_FromText(jsii.String(fmt.Sprintf(
			"QueueControlAlarm: %s on Drainpipe queue %s%s by %s at %s (error: %s). Runbook: QueueControlAlarm in docs/operations.md.",
			field("$.detail.eventName"), field("$.detail.requestParameters.queueUrl"), field("$.detail.requestParameters.sourceArn"),
			field("$.detail.userIdentity.arn"), field("$.time"), field("$.detail.errorCode")))),
	}))
	return rule
}

// names are actions as CloudTrail names them.
func names(actions []string) []string {
	out := make([]string, len(actions))
	for i, a := range actions {
		out[i] = strings.TrimPrefix(a, "sqs:")
	}
	return out
}
