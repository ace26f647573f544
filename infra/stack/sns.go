package stack

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssnssubscriptions"
	"github.com/aws/jsii-runtime-go"
)

// subscribeTopics subscribes the queue to each of Props.SNSTopicARNs (a
// lifecycle hook notifying a topic, or events a topic fans out), which is
// the function's `sns` message shape (DRAINPIPE_ACCEPT). Each subscription
// adds a queue-policy Allow for sns.amazonaws.com with the topic as
// aws:SourceArn; denyOtherSenders exempts the same ARNs, and no one else
// sends as SNS. Call before denyOtherSenders; it returns the topics' ARNs.
// Envelopes are kept (no raw delivery): the function reads the envelope.
// The cordon queue is not subscribed: the work queue alone cordons the
// nodes of SNS-delivered notices.
func subscribeTopics(c *Construct) []*string {
	var arns []*string
	for i, arn := range c.Props.SNSTopicARNs {
		topic := awssns.Topic_FromTopicArn(c.Scope, jsii.String(fmt.Sprintf("SnsTopic%d", i)), jsii.String(arn))
		topic.AddSubscription(awssnssubscriptions.NewSqsSubscription(c.Queue, &awssnssubscriptions.SqsSubscriptionProps{
			RawMessageDelivery: jsii.Bool(false),
		}))
		arns = append(arns, jsii.String(arn))
	}
	return arns
}
