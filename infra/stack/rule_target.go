package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
)

// queueRuleTarget sends a rule's events to a queue (the work or the cordon
// queue), and what EventBridge cannot deliver to the dead-letter queue, as
// CDK's SQS target does, but without its queue-policy statement per rule
// (about 460 bytes each, at worst, on each queue, of SQS's 8,192):
// allowRules writes one statement per queue for all the stack's rules.
type queueRuleTarget struct {
	queue, dlq awssqs.Queue
	maxAge     float64 // seconds
}

// Bind is awsevents.IRuleTarget's.
func (t *queueRuleTarget) Bind(awsevents.IRule, *string) *awsevents.RuleTargetConfig {
	return &awsevents.RuleTargetConfig{
		Arn:              t.queue.QueueArn(),
		DeadLetterConfig: &awsevents.CfnRule_DeadLetterConfigProperty{Arn: t.dlq.QueueArn()},
		// Undeliverable past the age the function would call stale: to
		// the dead-letter queue and its alarm.
		RetryPolicy:    &awsevents.CfnRule_RetryPolicyProperty{MaximumEventAgeInSeconds: jsii.Number(t.maxAge), MaximumRetryAttempts: jsii.Number(185)},
		TargetResource: t.queue,
	}
}

// allowRules lets EventBridge send to each queue for the stack's rules
// only (aws:SourceArn, which no caller can set): their events to the
// queue, what it cannot deliver to the dead-letter queue, and to the
// cordon queue for the rules that copy their notices there.
func allowRules(c *Construct) {
	type allow struct {
		sid   string
		queue awssqs.Queue
		rules []awsevents.Rule
	}
	allows := []allow{{"AllowStackRules", c.Queue, c.Rules}, {"AllowStackRulesDeadLetters", c.DeadLetterQueue, c.Rules}}
	if c.CordonQueue != nil {
		allows = append(allows, allow{"AllowStackRules", c.CordonQueue, c.cordonRules})
	}
	for _, q := range allows {
		var sources []*string
		for _, r := range q.rules {
			sources = append(sources, r.RuleArn())
		}
		q.queue.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:        jsii.String(q.sid),
			Principals: &[]awsiam.IPrincipal{awsiam.NewServicePrincipal(jsii.String("events.amazonaws.com"), nil)},
			Actions:    jsii.Strings("sqs:SendMessage"),
			Resources:  &[]*string{q.queue.QueueArn()},
			Conditions: &map[string]any{"ArnEquals": map[string]any{"aws:SourceArn": sources}},
		}))
	}
}
