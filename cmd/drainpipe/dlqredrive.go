package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// redriveResult is what `drainpipe dlq redrive` prints.
type redriveResult struct {
	Method     string `json:"method"` // move-task or resend
	Why        string `json:"why"`
	TaskHandle string `json:"taskHandle,omitempty"`
	Moved      int    `json:"moved"` // resend: messages sent and deleted
}

// redrive sends the dead-letter queue's messages back: by SQS's
// message-move task when the queue is an SQS queue's dead-letter queue
// (server-side, restartable, tracked by SQS), else by receiving each
// message, sending its body to `to` and deleting it.
func redrive(ctx context.Context, client dlqAPI, queue, to string, resend bool) (redriveResult, error) {
	srcs, err := client.ListDeadLetterSourceQueues(ctx, &sqs.ListDeadLetterSourceQueuesInput{QueueUrl: aws.String(queue)})
	if err != nil {
		return redriveResult{}, fmt.Errorf("listing the queues %s is the dead-letter queue of: %w", queue, err)
	}
	switch {
	case resend && to == "":
		return redriveResult{}, usageError{fmt.Errorf("--resend needs --to: a resent message has no queue of its own to go back to")}
	case resend:
		return resendAll(ctx, client, queue, to, "--resend asked for a receive-and-resend")
	case len(srcs.QueueUrls) == 0 && to == "":
		return redriveResult{}, usageError{fmt.Errorf("%s is no SQS queue's dead-letter queue: give --to, the queue to resend to", queue)}
	case len(srcs.QueueUrls) == 0:
		return resendAll(ctx, client, queue, to, "the queue is no SQS queue's dead-letter queue, so SQS's move task cannot take it")
	case to != "" && !slices.Contains(srcs.QueueUrls, to):
		return resendAll(ctx, client, queue, to, "--to is not a queue this one is the dead-letter queue of")
	}
	src, err := queueARN(ctx, client, queue)
	if err != nil {
		return redriveResult{}, err
	}
	in := &sqs.StartMessageMoveTaskInput{SourceArn: src}
	why := "the queue is the dead-letter queue of " + srcs.QueueUrls[0] + ": SQS moves the messages back itself"
	if to != "" {
		if in.DestinationArn, err = queueARN(ctx, client, to); err != nil {
			return redriveResult{}, err
		}
	}
	out, err := client.StartMessageMoveTask(ctx, in)
	if err != nil {
		return redriveResult{}, fmt.Errorf("starting the message-move task: %w", err)
	}
	return redriveResult{Method: "move-task", Why: why, TaskHandle: aws.ToString(out.TaskHandle)}, nil
}

func queueARN(ctx context.Context, client dlqAPI, queue string) (*string, error) {
	out, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(queue),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		return nil, fmt.Errorf("reading the ARN of %s: %w", queue, err)
	}
	arn := out.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]
	if arn == "" {
		return nil, fmt.Errorf("SQS gave no ARN for %s", queue)
	}
	return aws.String(arn), nil
}

// resendAll receives every message, sends its body to `to` and then
// deletes it: a message is deleted only once sent, so a failure leaves it
// in the dead-letter queue (and at worst sends it twice, which the
// function's handling of duplicates absorbs). Message attributes are not
// carried: the function reads none, and those EventBridge sets on a
// dead-lettered event describe the failed delivery.
func resendAll(ctx context.Context, client dlqAPI, queue, to, why string) (redriveResult, error) {
	res := redriveResult{Method: "resend", Why: why}
	for {
		out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(queue),
			MaxNumberOfMessages: 10, VisibilityTimeout: listVisibility})
		if err != nil {
			return res, fmt.Errorf("receiving from %s: %w", queue, err)
		}
		if len(out.Messages) == 0 {
			return res, nil
		}
		for _, m := range out.Messages {
			if _, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(to), MessageBody: m.Body}); err != nil {
				return res, fmt.Errorf("sending message %s to %s (it stays in the dead-letter queue): %w", aws.ToString(m.MessageId), to, err)
			}
			if _, err := client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(queue), ReceiptHandle: m.ReceiptHandle}); err != nil {
				return res, fmt.Errorf("deleting message %s, already sent to %s: %w", aws.ToString(m.MessageId), to, err)
			}
			res.Moved++
		}
	}
}

// usageError is a redrive refused for its arguments (exit 2).
type usageError struct{ error }
