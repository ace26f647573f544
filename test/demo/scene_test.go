package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/drainpipe/drainpipe/test/awsfake"
)

// TestStagedAccountAnswers: the demo's fakes answer the calls the function
// makes beside the drain, GetQueueUrl for the queue its events name and
// DescribeLifecycleHooks for the group's hook, so the happy path logs no
// warning.
func TestStagedAccountAnswers(t *testing.T) {
	fake := awsfake.New()
	defer fake.Close()
	stageAccount(fake)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	b, err := sqsEvent("m", spotWarning("i-0123456789abcdef0", time.Now()), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var ev events.SQSEvent
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatal(err)
	}
	arn := strings.Split(ev.Records[0].EventSourceARN, ":")
	out, err := sqs.NewFromConfig(fake.Config()).GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(arn[5]), QueueOwnerAWSAccountId: aws.String(arn[4])})
	if err != nil || aws.ToString(out.QueueUrl) == "" {
		t.Errorf("GetQueueUrl for the events' queue %s: %v", ev.Records[0].EventSourceARN, err)
	}
	hooks, err := autoscaling.NewFromConfig(fake.Config()).DescribeLifecycleHooks(ctx, &autoscaling.DescribeLifecycleHooksInput{AutoScalingGroupName: aws.String(asgName)})
	if err != nil || len(hooks.LifecycleHooks) != 1 || aws.ToString(hooks.LifecycleHooks[0].LifecycleHookName) != hookName {
		t.Errorf("DescribeLifecycleHooks for %s: %+v, %v; want hook %s", asgName, hooks, err, hookName)
	}
}
