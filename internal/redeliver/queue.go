package redeliver

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/drainpipe/drainpipe/internal/event"
)

var errNoReceipt = errors.New("the message has no receipt handle")

// queue is an SQS queue as its ARN names it.
type queue struct {
	arn, region, account, name string
}

var (
	partitionRe = regexp.MustCompile(`^aws(-[a-z]+)*$`)
	accountRe   = regexp.MustCompile(`^[0-9]{12}$`)
	// SQS queue names: up to 80 characters, ".fifo" included.
	queueNameRe = regexp.MustCompile(`^[A-Za-z0-9_-]+(\.fifo)?$`)
)

// parseARN reads arn:<partition>:sqs:<region>:<account>:<queue>, the
// EventSourceARN of a Lambda SQS record.
func parseARN(arn string) (queue, error) {
	parts := strings.Split(arn, ":")
	if len(parts) != 6 || parts[0] != "arn" || !partitionRe.MatchString(parts[1]) || parts[2] != "sqs" {
		return queue{}, fmt.Errorf("parsing event source %q: not an SQS queue ARN", arn)
	}
	q := queue{arn: arn, region: parts[3], account: parts[4], name: parts[5]}
	if !event.ValidRegion(q.region) {
		return queue{}, fmt.Errorf("parsing event source %q: malformed region %q", arn, q.region)
	}
	if !accountRe.MatchString(q.account) {
		return queue{}, fmt.Errorf("parsing event source %q: malformed account %q", arn, q.account)
	}
	if len(q.name) > 80 || !queueNameRe.MatchString(q.name) {
		return queue{}, fmt.Errorf("parsing event source %q: malformed queue name %q", arn, q.name)
	}
	return q, nil
}

// inRegion sends a call to the queue's own region, whatever the client's.
func (q queue) inRegion(o *sqs.Options) { o.Region = q.region }

// queueURL returns the queue's URL, asking SQS once per queue: the URL's
// host depends on the partition and endpoint flavour, which the ARN does
// not tell, so it is not built by hand. Failures are not cached.
func (s *Scheduler) queueURL(ctx context.Context, q queue) (string, error) {
	s.mu.Lock()
	url, ok := s.urls[q.arn]
	s.mu.Unlock()
	if ok {
		return url, nil
	}
	out, err := s.api.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{
		QueueName:              aws.String(q.name),
		QueueOwnerAWSAccountId: aws.String(q.account),
	}, q.inRegion)
	if err != nil {
		return "", fmt.Errorf("getting the URL of queue %s: %w", q.arn, err)
	}
	url = aws.ToString(out.QueueUrl)
	if url == "" {
		return "", fmt.Errorf("getting the URL of queue %s: empty answer", q.arn)
	}
	s.mu.Lock()
	s.urls[q.arn] = url
	s.mu.Unlock()
	return url, nil
}

// sourceQueue is the queue a message came from, which must be named by
// its EventSourceARN and hold the message's receipt for its visibility to
// be changed.
func sourceQueue(m events.SQSMessage) (queue, error) {
	q, err := parseARN(m.EventSourceARN)
	if err == nil && m.ReceiptHandle == "" {
		err = errNoReceipt
	}
	return q, err
}
