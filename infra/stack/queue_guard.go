package stack

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
)

// consumeActions take messages out of a queue or hide them: an `sqs:*`
// admin with them could swallow interruption notices silently.
var consumeActions = []string{"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:PurgeQueue", "sqs:ChangeMessageVisibility"}

// guardConsumers denies the consume actions on every queue to everyone but
// the function's role (the event sources poll with it) and the operator
// roles, and lets those roles run a dead-letter redrive (SQS's message-move
// task reads and deletes from the dead-letter queue and sends to the
// queue as the caller: by default to the queue each message came from,
// the cordon queue's copies to it).
func guardConsumers(c *Construct) {
	principals := []*string{c.Role.RoleArn()}
	var operators []awsiam.IPrincipal
	for _, r := range c.Props.OperatorRoleARNs {
		principals = append(principals, jsii.String(r))
		operators = append(operators, awsiam.NewArnPrincipal(jsii.String(r)))
	}
	for i, q := range c.queues() {
		denyOnQueue(q, fmt.Sprintf("DenyOtherConsumers%d", i), consumeActions, map[string]any{"ArnNotEquals": map[string]any{"aws:PrincipalArn": principals}})
	}
	if len(operators) == 0 {
		return
	}
	// Validate and checkTrustedAccount refuse operators of another
	// account; an environment-agnostic stack cannot tell at synth, so
	// these Allows hold for principals of the deployed account only.
	own := &map[string]any{"StringEquals": map[string]any{"aws:PrincipalAccount": awscdk.Stack_Of(c.Scope).Account()}}
	c.DeadLetterQueue.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String("OperatorsRedrive"),
		Principals: &operators,
		// ChangeMessageVisibility and ListDeadLetterSourceQueues serve
		// `drainpipe dlq list` (messages made visible again) and `dlq
		// redrive` (which way to redrive).
		Actions: jsii.Strings("sqs:StartMessageMoveTask", "sqs:ListMessageMoveTasks", "sqs:CancelMessageMoveTask",
			"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ChangeMessageVisibility",
			"sqs:ListDeadLetterSourceQueues"),
		Resources:  &[]*string{c.DeadLetterQueue.QueueArn()},
		Conditions: own,
	}))
	for _, q := range []awssqs.Queue{c.Queue, c.CordonQueue} {
		if q == nil {
			continue
		}
		q.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:        jsii.String("OperatorsRedriveTarget"),
			Principals: &operators,
			Actions:    jsii.Strings("sqs:SendMessage", "sqs:GetQueueAttributes"),
			Resources:  &[]*string{q.QueueArn()},
			Conditions: own,
		}))
	}
}
