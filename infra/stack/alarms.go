package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssnssubscriptions"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// newAlarms watches the ways Drainpipe can fail quietly: messages given up
// on (dead-letter queue), invocations that crash or time out, a queue that
// is not being drained, and (from the function's metrics) drains cut short
// by the instance's deadline or blocked by disruption budgets.
func newAlarms(c *Construct) {
	s, p, queue, dlq, fn := c.Scope, c.Props, c.Queue, c.DeadLetterQueue, c.Function
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
		queue.MetricApproximateAgeOfOldestMessage(&awscloudwatch.MetricOptions{Period: minute, Statistic: jsii.String("Maximum")}).
			CreateAlarm(s, jsii.String("OldestMessageAlarm"), &awscloudwatch.CreateAlarmOptions{
				AlarmDescription:   jsii.String("Drainpipe's queue is not being drained: its oldest message is too old"),
				Threshold:          jsii.Number(p.AlarmOldestMessageAge.Seconds()),
				ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
				EvaluationPeriods:  jsii.Number(1),
				TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
			}),
	}
	alarms = append(alarms, metricAlarms(s)...)
	// Rejected records are deleted, not retried: without this alarm a
	// forged or broken message would leave only a log line.
	alarms = append(alarms, emf("Records", "Sum", map[string]string{"outcome": "rejected"}).
		With(&awscloudwatch.MetricOptions{Period: awscdk.Duration_Minutes(jsii.Number(5))}).
		CreateAlarm(s, jsii.String("RejectedRecordsAlarm"), &awscloudwatch.CreateAlarmOptions{
			AlarmDescription:   jsii.String("Drainpipe rejected a message (malformed, forged or from elsewhere): see the 'record handled' logs with outcome rejected"),
			Threshold:          jsii.Number(0),
			ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
			EvaluationPeriods:  jsii.Number(1),
			TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
		}))
	if a := sweepAlarm(c); a != nil {
		alarms = append(alarms, a)
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
