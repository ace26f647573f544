package redeliver

import (
	"context"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// Waiting tells how many messages are visible in the queue arn names
// (ApproximateNumberOfMessages): received messages in flight are not
// counted. A batch asks it to decide whether to give way.
func (s *Scheduler) Waiting(ctx context.Context, arn string) (int, error) {
	q, err := parseARN(arn)
	if err != nil {
		return 0, err
	}
	url, err := s.queueURL(ctx, q)
	if err != nil {
		return 0, err
	}
	out, err := s.api.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages}}, q.inRegion)
	if err != nil {
		return 0, fmt.Errorf("getting the attributes of queue %s: %w", arn, err)
	}
	v := out.Attributes[string(types.QueueAttributeNameApproximateNumberOfMessages)]
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("queue %s: ApproximateNumberOfMessages %q is not a count", arn, v)
	}
	return n, nil
}
