// Package stack defines Drainpipe's CloudFormation resources: the encrypted
// work and cordon queues and their dead-letter queue, the EventBridge rules
// feeding them, the function consuming them, least-privilege IAM, EKS
// access entries, alarms and outputs. NewConstruct adds them to any stack;
// New is this repository's stack around them. Everything configurable
// comes in through Props.
package stack

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// New validates props and adds the Drainpipe stack to scope. Invalid props
// (including a missing Lambda asset) return an error before any construct
// is created. The resources sit directly in the stack, so their logical
// IDs are those of the stack before the construct existed and an update
// replaces nothing.
func New(scope constructs.Construct, id string, props Props, stackProps *awscdk.StackProps) (awscdk.Stack, error) {
	if err := props.Validate(); err != nil {
		return nil, fmt.Errorf("validating props: %w", err)
	}
	if stackProps == nil {
		stackProps = &awscdk.StackProps{}
	}
	if stackProps.Description == nil {
		stackProps.Description = jsii.String("Drainpipe: drains EKS nodes before EC2 takes their instances away")
	}
	s := awscdk.NewStack(scope, jsii.String(id), stackProps)
	c, err := build(s, props)
	if err != nil {
		return nil, err
	}
	// A fixed ID keeps `sam local invoke -t <template> Function` stable.
	c.Function.Node().DefaultChild().(awslambda.CfnFunction).OverrideLogicalId(jsii.String(FunctionLogicalID))
	return s, nil
}

// newQueues creates the work queue, the cordon queue unless it is off
// (nil then), and their dead-letter queue. All use SSE-SQS: EventBridge
// cannot send to a queue under the AWS-managed KMS key.
func newQueues(s constructs.Construct, p Props) (queue, cordon, dlq awssqs.Queue) {
	dlq = awssqs.NewQueue(s, jsii.String("DeadLetterQueue"), &awssqs.QueueProps{
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
		RetentionPeriod: awscdk.Duration_Seconds(jsii.Number(dlqRetention.Seconds())),
	})
	suppress(dlq, rule{"AwsSolutions-SQS3", "This is the dead-letter queue; it has none of its own.", ""})
	name := queueName(s, p, "-queue")
	sources := []*string{queueARN(s, name)}
	if p.cordonConcurrency() > 0 {
		cordonName := queueName(s, p, cordonSuffix)
		sources = append(sources, queueARN(s, cordonName))
		cordon = newCordonQueue(s, p, dlq, cordonName)
	}
	allowRedriveFrom(dlq, sources...)
	queue = awssqs.NewQueue(s, jsii.String("Queue"), &awssqs.QueueProps{
		QueueName:  jsii.String(name),
		Encryption: awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL: jsii.Bool(true),
		// A message outlives all its attempts, so a long drain can resume
		// on redelivery and the final attempt can still complete the hook.
		RetentionPeriod:   awscdk.Duration_Seconds(jsii.Number(queueRetention.Seconds())),
		VisibilityTimeout: awscdk.Duration_Seconds(jsii.Number(p.Visibility().Seconds())),
		DeadLetterQueue: &awssqs.DeadLetterQueue{
			Queue:           dlq,
			MaxReceiveCount: jsii.Number(float64(p.MaxReceiveCount)),
		},
	})
	return queue, cordon, dlq
}
