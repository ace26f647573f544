package stack

import (
	"fmt"
	"math"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssnssubscriptions"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// newAlarms watches the ways Drainpipe can fail quietly: messages given up
// on (dead-letter queue), invocations that crash or time out, messages
// nobody receives, cordons lagging, and (from the function's metrics)
// drains cut short by the instance's deadline or blocked by disruption
// budgets.
func newAlarms(c *Construct) {
	s, p, dlq, fn := c.Scope, c.Props, c.DeadLetterQueue, c.Function
	minute := awscdk.Duration_Minutes(jsii.Number(1))
	alarms := []awscloudwatch.Alarm{
		dlq.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{Period: minute, Statistic: jsii.String("Maximum")}).
			CreateAlarm(s, jsii.String("DeadLetterAlarm"), &awscloudwatch.CreateAlarmOptions{
				AlarmDescription:   jsii.String("Drainpipe gave up on a message (or EventBridge could not deliver one): see the dead-letter queue"),
				Threshold:          jsii.Number(0),
				ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
				EvaluationPeriods:  jsii.Number(1),
				TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
			}),
		fn.MetricErrors(&awscloudwatch.MetricOptions{Period: awscdk.Duration_Minutes(jsii.Number(5)), Statistic: jsii.String("Sum")}).
			CreateAlarm(s, jsii.String("ErrorsAlarm"), &awscloudwatch.CreateAlarmOptions{
				AlarmDescription:   jsii.String("The Drainpipe function failed whole invocations (crash, timeout or out of memory)"),
				Threshold:          jsii.Number(float64(p.AlarmErrors)),
				ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
				EvaluationPeriods:  jsii.Number(1),
				TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
			}),
		unreceivedAlarm(c),
		// A throttled invocation leaves its batch in flight, invisible to
		// the alarm above, until the visibility timeout: nobody works on it.
		fn.MetricThrottles(&awscloudwatch.MetricOptions{Period: awscdk.Duration_Minutes(jsii.Number(5)), Statistic: jsii.String("Sum")}).
			CreateAlarm(s, jsii.String("ThrottlesAlarm"), &awscloudwatch.CreateAlarmOptions{
				AlarmDescription:   jsii.String("The Drainpipe function was throttled: its batches wait in flight until the visibility timeout (raise reservedConcurrency, or free the account's concurrency)"),
				Threshold:          jsii.Number(1),
				ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
				EvaluationPeriods:  jsii.Number(1),
				TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
			}),
	}
	alarms = append(alarms, metricAlarms(c)...)
	// Rejected records are deleted, not retried: without this alarm a
	// forged or broken message would leave only a log line.
	alarms = append(alarms, c.emf("Records", "Sum", map[string]string{"outcome": "rejected"}).
		With(&awscloudwatch.MetricOptions{Period: awscdk.Duration_Minutes(jsii.Number(5))}).
		CreateAlarm(s, jsii.String("RejectedRecordsAlarm"), &awscloudwatch.CreateAlarmOptions{
			AlarmDescription:   jsii.String("Drainpipe rejected a message (malformed, forged or from elsewhere): see the 'record handled' logs with outcome rejected"),
			Threshold:          jsii.Number(0),
			ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
			EvaluationPeriods:  jsii.Number(1),
			TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
		}))
	for _, a := range []awscloudwatch.Alarm{sweepAlarm(c), cordonLagAlarm(c)} {
		if a != nil {
			alarms = append(alarms, a)
		}
	}
	c.Alarms = alarms
	c.AlarmTopic = alarmTopic(s, p)
	for _, a := range alarms {
		a.AddAlarmAction(awscloudwatchactions.NewSnsAction(c.AlarmTopic))
		a.AddOkAction(awscloudwatchactions.NewSnsAction(c.AlarmTopic))
	}
}

// alarmTopic is the configured topic, or one created here so an alarm
// reaches someone: subscribed to AlarmEmail when given, and named in the
// outputs either way.
func alarmTopic(s constructs.Construct, p Props) awssns.ITopic {
	if p.AlarmTopicARN != "" {
		return awssns.Topic_FromTopicArn(s, jsii.String("AlarmTopic"), jsii.String(p.AlarmTopicARN))
	}
	topic := awssns.NewTopic(s, jsii.String("AlarmTopic"), &awssns.TopicProps{
		DisplayName: jsii.String("Drainpipe alarms"),
		EnforceSSL:  jsii.Bool(true),
	})
	desc := "Drainpipe's alarms notify this topic: subscribe to it (no alarmEmail was given)"
	if p.AlarmEmail != "" {
		topic.AddSubscription(awssnssubscriptions.NewEmailSubscription(jsii.String(p.AlarmEmail), nil))
		desc = "Drainpipe's alarms notify this topic; " + p.AlarmEmail + " is subscribed (confirm the email AWS sends)"
	}
	awscdk.NewCfnOutput(s, jsii.String("AlarmTopicArn"), &awscdk.CfnOutputProps{Value: topic.TopicArn(), Description: jsii.String(desc)})
	return topic
}

// unreceivedAlarm (OldestMessageAlarm) fires when messages have waited in
// the queue, visible and unreceived, for AlarmOldestMessageAge: the event
// source is disabled or denied, the function throttled, or the wave larger
// than maxConcurrency can take. It does not watch the age of the oldest
// message: a rebalance hold and a retried drain (a lifecycle drain blocked
// by a budget) keep their record in the queue by design, in flight (their
// visibility set by the function), for up to 12 hours; SQS counts them in
// ApproximateAgeOfOldestMessage, not in ApproximateNumberOfMessagesVisible.
// A visible message is one nobody is working on; the event source takes
// one in seconds, so a visible count above zero in every one-minute sample
// for the whole window means a backlog. The queue's own metric keeps
// working when the function does not run at all, which a metric the
// function reported could not.
func unreceivedAlarm(c *Construct) awscloudwatch.Alarm {
	minutes := math.Ceil(c.Props.AlarmOldestMessageAge.Minutes())
	return c.Queue.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{
		Period: awscdk.Duration_Minutes(jsii.Number(1)), Statistic: jsii.String("Minimum"),
	}).CreateAlarm(c.Scope, jsii.String("OldestMessageAlarm"), &awscloudwatch.CreateAlarmOptions{
		AlarmDescription: jsii.String(fmt.Sprintf("Messages have waited in Drainpipe's queue unreceived for %g minutes: the function is not consuming "+
			"(event source disabled, throttled, access denied) or cannot keep up (raise maxConcurrency). Held and retried records are in flight and do not count", minutes)),
		Threshold:          jsii.Number(0),
		ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
		EvaluationPeriods:  jsii.Number(minutes),
		DatapointsToAlarm:  jsii.Number(minutes),
		TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
	})
}

// metricAlarms watch the function's own metrics: a drain the instance's
// deadline cut short (pods died with the instance), and a drain blocked by
// disruption budgets for longer than AlarmDrainBlocked. DrainBlockedFor is
// how long the drain has been blocked over all its runs, reported at the
// end of each: one datapoint is enough, so the alarm fires at the end of
// the first run past the stated time whatever the function timeout (at
// most AlarmDrainBlocked + one run + the retry delay after the block).
func metricAlarms(c *Construct) []awscloudwatch.Alarm {
	five := awscdk.Duration_Minutes(jsii.Number(5))
	return []awscloudwatch.Alarm{
		c.emf("DeadlineHit", "Sum", nil).With(&awscloudwatch.MetricOptions{Period: five}).
			CreateAlarm(c.Scope, jsii.String("DeadlineHitAlarm"), &awscloudwatch.CreateAlarmOptions{
				AlarmDescription:   jsii.String("A drain did not finish before the instance's deadline: pods were still on the node when it went"),
				Threshold:          jsii.Number(1),
				ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
				EvaluationPeriods:  jsii.Number(1),
				TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
			}),
		c.emf("DrainBlockedFor", "Maximum", nil).With(&awscloudwatch.MetricOptions{Period: five}).
			CreateAlarm(c.Scope, jsii.String("DrainBlockedAlarm"), &awscloudwatch.CreateAlarmOptions{
				AlarmDescription: jsii.String(fmt.Sprintf("PodDisruptionBudgets have blocked a drain for %g minutes or more: see DrainBlocked events on the node and `drainpipe nodes NODE`",
					c.Props.AlarmDrainBlocked.Minutes())),
				Threshold:          jsii.Number(c.Props.AlarmDrainBlocked.Seconds()),
				ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
				EvaluationPeriods:  jsii.Number(1),
				TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
			}),
	}
}

// sweepAlarm fires when a sweep repaired anything: each repair means a
// notice was lost (the dead-letter queue, a rule missing, a stop while
// the function was failing). Nil when there is no sweep.
func sweepAlarm(c *Construct) awscloudwatch.Alarm {
	if c.Props.SweepInterval <= 0 {
		return nil
	}
	return c.emf("SweepRepairs", "Sum", nil).With(&awscloudwatch.MetricOptions{Period: awscdk.Duration_Minutes(jsii.Number(5))}).
		CreateAlarm(c.Scope, jsii.String("SweepRepairsAlarm"), &awscloudwatch.CreateAlarmOptions{
			AlarmDescription:   jsii.String("The sweep repaired a node a lost notice left out of service (or in service): see the 'sweep repaired a node' logs"),
			Threshold:          jsii.Number(0),
			ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
			EvaluationPeriods:  jsii.Number(1),
			TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
		})
}
