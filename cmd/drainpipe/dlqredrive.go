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

// redrivePlan is how a redrive would go, decided before anything moves.
type redrivePlan struct {
	res      redriveResult
	queue    string
	to       string
	task     *sqs.StartMessageMoveTaskInput // nil: receive and resend
	messages string                         // SQS's approximate count of the queue's messages
}

// planRedrive decides, with read-only calls, how to send the dead-letter
// queue's messages back: by SQS's message-move task when the queue is an
// SQS queue's dead-letter queue (server-side, restartable, tracked by
// SQS), else by receiving each message, sending its body to `to` and
// deleting it.
func planRedrive(ctx context.Context, client dlqAPI, queue, to string, resend bool) (redrivePlan, error) {
	srcs, err := client.ListDeadLetterSourceQueues(ctx, &sqs.ListDeadLetterSourceQueuesInput{QueueUrl: aws.String(queue)})
	if err != nil {
		return redrivePlan{}, fmt.Errorf("listing the queues %s is the dead-letter queue of: %w", queue, err)
	}
	p := redrivePlan{queue: queue, to: to, res: redriveResult{Method: "resend"}}
	switch {
	case resend && to == "":
		return redrivePlan{}, usageError{fmt.Errorf("--resend needs --to: a resent message has no queue of its own to go back to")}
	case resend:
		p.res.Why = "--resend asked for a receive-and-resend"
	case len(srcs.QueueUrls) == 0 && to == "":
		return redrivePlan{}, usageError{fmt.Errorf("%s is no SQS queue's dead-letter queue: give --to, the queue to resend to", queue)}
	case len(srcs.QueueUrls) == 0:
		p.res.Why = "the queue is no SQS queue's dead-letter queue, so SQS's move task cannot take it"
	case to != "" && !slices.Contains(srcs.QueueUrls, to):
		p.res.Why = "--to is not a queue this one is the dead-letter queue of"
	default:
		p.res = redriveResult{Method: "move-task", Why: "the queue is the dead-letter queue of " + srcs.QueueUrls[0] + ": SQS moves the messages back itself"}
		p.task = &sqs.StartMessageMoveTaskInput{}
		if p.task.SourceArn, err = queueARN(ctx, client, queue); err != nil {
			return redrivePlan{}, err
		}
		if to != "" {
			if p.task.DestinationArn, err = queueARN(ctx, client, to); err != nil {
				return redrivePlan{}, err
			}
		} else {
			p.to = "the queue each came from"
		}
	}
	p.messages = "an unknown number of"
	if out, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(queue),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages}}); err == nil {
		p.messages = "about " + out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessages)]
	}
	return p, nil
}

// describe says what the redrive would do, for its confirmation.
func (p redrivePlan) describe() string {
	how := "receive each one, send its body to " + p.to + " and delete it"
	if p.task != nil {
		how = "start SQS's message-move task, which moves them to " + p.to
	}
	return fmt.Sprintf("send %s messages of %s back to be handled: %s (%s).", p.messages, p.queue, how, p.res.Why)
}

// run carries the plan out.
func (p redrivePlan) run(ctx context.Context, client dlqAPI) (redriveResult, error) {
	if p.task == nil {
		return resendAll(ctx, client, p.queue, p.to, p.res.Why)
	}
	out, err := client.StartMessageMoveTask(ctx, p.task)
	if err != nil {
		return redriveResult{}, fmt.Errorf("starting the message-move task: %w", err)
	}
	res := p.res
	res.TaskHandle = aws.ToString(out.TaskHandle)
	return res, nil
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
