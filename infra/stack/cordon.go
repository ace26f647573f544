package stack

import (
	"fmt"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// The cordon queue takes a copy of every notice the interruption rules send
// the work queue, and a second event source hands it to the same function
// at once. The work queue's event source runs at most batchSize ×
// maxConcurrency records at a time, each batch until its drains end: the
// rest of a wider wave would wait that long before its nodes were even
// cordoned. From a copy the function only cordons, taints and holds (it
// tells the batches apart by DRAINPIPE_CORDON_QUEUE_ARN), acknowledges
// every record, and ignores a copy sent over 30 s ago; the work queue's
// copy does the rest.
const (
	defaultCordonConcurrency = 20
	cordonSuffix             = "-cordon"
	// cordonBatchSize is the largest SQS batch without a batching window,
	// which would only delay the cordons.
	cordonBatchSize = 10
	// cordonMaxReceives sends a copy that crashed the function twice to the
	// dead-letter queue, whose alarm then fires.
	cordonMaxReceives = 2
	// cordonVisibilityMargin is added to the function timeout (Lambda
	// refuses a queue whose visibility timeout is shorter), so a copy is
	// not delivered again while its batch still runs.
	cordonVisibilityMargin = 30 * time.Second
	// cordonMinRetention: the function ignores a copy sent over 30 s ago,
	// so keeping one longer only serves its way to the dead-letter queue.
	cordonMinRetention = 5 * time.Minute
	// cordonLag is the oldest copy's age past which CordonLagAlarm fires:
	// the function would ignore it, leaving its node to the work queue.
	cordonLag = 30 * time.Second
)

// cordonConcurrency is the cordon event source's maximum concurrency, 0
// when there is no cordon queue.
func (p Props) cordonConcurrency() int {
	switch {
	case p.CordonConcurrency < 0:
		return 0
	case p.CordonConcurrency == 0:
		return defaultCordonConcurrency
	}
	return p.CordonConcurrency
}

// cordonVisibility is the cordon queue's visibility timeout.
func (p Props) cordonVisibility() time.Duration { return p.Timeout + cordonVisibilityMargin }

// cordonRetention keeps a copy through both its deliveries, so one that
// crashed the function twice still reaches the dead-letter queue.
func (p Props) cordonRetention() time.Duration {
	return max(cordonMinRetention, cordonMaxReceives*p.cordonVisibility()+time.Minute)
}

// newCordonQueue creates the cordon queue, named name (fixed, for the
// dead-letter queue's RedriveAllowPolicy: see queueName).
func newCordonQueue(s constructs.Construct, p Props, dlq awssqs.Queue, name string) awssqs.Queue {
	return awssqs.NewQueue(s, jsii.String("CordonQueue"), &awssqs.QueueProps{
		QueueName:         jsii.String(name),
		Encryption:        awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:        jsii.Bool(true),
		RetentionPeriod:   awscdk.Duration_Seconds(jsii.Number(p.cordonRetention().Seconds())),
		VisibilityTimeout: awscdk.Duration_Seconds(jsii.Number(p.cordonVisibility().Seconds())),
		DeadLetterQueue: &awssqs.DeadLetterQueue{
			Queue:           dlq,
			MaxReceiveCount: jsii.Number(cordonMaxReceives),
		},
	})
}

// addCordonSource has the function consume the cordon queue and tells it
// which queue that is. The event source's grant is the role's only access
// to the queue: the work queue's other uses (hastened redelivery, giving
// way) are not the cordon path's. Nothing when the queue is off.
func addCordonSource(c *Construct) {
	if c.CordonQueue == nil {
		return
	}
	c.Function.AddEventSource(awslambdaeventsources.NewSqsEventSource(c.CordonQueue, &awslambdaeventsources.SqsEventSourceProps{
		BatchSize:      jsii.Number(cordonBatchSize),
		MaxConcurrency: jsii.Number(float64(c.Props.cordonConcurrency())),
		// The function acknowledges every copy; a batch failing as a whole
		// is still retried, and dead-lettered.
		ReportBatchItemFailures: jsii.Bool(true),
	}))
	c.Function.AddEnvironment(jsii.String("DRAINPIPE_CORDON_QUEUE_ARN"), c.CordonQueue.QueueArn(), nil)
}

// cordonLagAlarm (CordonLagAlarm) fires when a copy has waited in the
// cordon queue over 30 s: its node was not cordoned at once, and the
// function will ignore it (the work queue's copy still handles the node,
// late). Copies are never held in flight on purpose, so their age is the
// lag. Nil without the cordon queue.
func cordonLagAlarm(c *Construct) awscloudwatch.Alarm {
	if c.CordonQueue == nil {
		return nil
	}
	return c.CordonQueue.MetricApproximateAgeOfOldestMessage(&awscloudwatch.MetricOptions{
		Period: awscdk.Duration_Minutes(jsii.Number(1)), Statistic: jsii.String("Maximum"),
	}).CreateAlarm(c.Scope, jsii.String("CordonLagAlarm"), &awscloudwatch.CreateAlarmOptions{
		AlarmDescription: jsii.String(fmt.Sprintf("A notice's copy waited in Drainpipe's cordon queue over %g s: its node was not cordoned at once "+
			"(function throttled, failing or denied, or cordonConcurrency too low for the wave); the work queue still handles it", cordonLag.Seconds())),
		Threshold:          jsii.Number(cordonLag.Seconds()),
		ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
		EvaluationPeriods:  jsii.Number(1),
		TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
	})
}
