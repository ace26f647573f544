package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/drainpipe/drainpipe/test/awsfake"
)

const account = "123456789012"

// queueName is the queue the demo's SQS events come from.
const queueName = "drainpipe"

// spotWarning is EventBridge's two-minute Spot interruption warning for
// instance, sent at now: the instance goes at now + 2 minutes.
func spotWarning(instance string, now time.Time) map[string]any {
	return map[string]any{
		"version":     "0",
		"id":          "7f0e3a52-0c1d-4d6e-9f00-5b1a2c3d4e01",
		"detail-type": "EC2 Spot Instance Interruption Warning",
		"source":      "aws.ec2",
		"account":     account,
		"time":        now.UTC().Format(time.RFC3339),
		"region":      awsfake.Region,
		"resources":   []string{fmt.Sprintf("arn:aws:ec2:%s:%s:instance/%s", awsfake.Region, account, instance)},
		"detail":      map[string]string{"instance-id": instance, "instance-action": "terminate"},
	}
}

// terminateHook is EventBridge's Auto Scaling terminate lifecycle action
// for instance, held by the demo's group and hook.
func terminateHook(instance string, now time.Time) map[string]any {
	return map[string]any{
		"version":     "0",
		"id":          "7f0e3a52-0c1d-4d6e-9f00-5b1a2c3d4e02",
		"detail-type": "EC2 Instance-terminate Lifecycle Action",
		"source":      "aws.autoscaling",
		"account":     account,
		"time":        now.UTC().Format(time.RFC3339),
		"region":      awsfake.Region,
		"resources":   []string{fmt.Sprintf("arn:aws:autoscaling:%s:%s:autoScalingGroup:demo:autoScalingGroupName/%s", awsfake.Region, account, asgName)},
		"detail": map[string]string{
			"LifecycleActionToken": hookToken,
			"AutoScalingGroupName": asgName,
			"LifecycleHookName":    hookName,
			"EC2InstanceId":        instance,
			"LifecycleTransition":  "autoscaling:EC2_INSTANCE_TERMINATING",
		},
	}
}

// sqsEvent is the Lambda SQS event carrying body as one first delivery.
func sqsEvent(messageID string, body map[string]any, now time.Time) ([]byte, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encoding message body: %w", err)
	}
	ms := strconv.FormatInt(now.UnixMilli(), 10)
	ev := events.SQSEvent{Records: []events.SQSMessage{{
		MessageId:     messageID,
		ReceiptHandle: "AQEB-demo-" + messageID,
		Body:          string(b),
		Attributes: map[string]string{
			"ApproximateReceiveCount":          "1",
			"SentTimestamp":                    ms,
			"ApproximateFirstReceiveTimestamp": ms,
		},
		EventSource:    "aws:sqs",
		EventSourceARN: fmt.Sprintf("arn:aws:sqs:%s:%s:%s", awsfake.Region, account, queueName),
		AWSRegion:      awsfake.Region,
	}}}
	out, err := json.Marshal(ev)
	if err != nil {
		return nil, fmt.Errorf("encoding SQS event: %w", err)
	}
	return out, nil
}
