package stack

import (
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// The function's embedded-format metrics (internal/metrics): namespace,
// names and the outcomes a record can end with.
const (
	metricsNamespace = "Drainpipe"
	metricPeriod     = time.Minute
)

var recordOutcomes = []string{"done", "ignored", "rejected", "retry"}

// emf is one of the function's metrics; dims empty means the aggregate
// published without dimensions.
func emf(name, stat string, dims map[string]string) awscloudwatch.Metric {
	var dm *map[string]*string
	if len(dims) > 0 {
		m := map[string]*string{}
		for k, v := range dims {
			m[k] = jsii.String(v)
		}
		dm = &m
	}
	return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
		Namespace: jsii.String(metricsNamespace), MetricName: jsii.String(name), Statistic: jsii.String(stat),
		DimensionsMap: dm, Period: awscdk.Duration_Seconds(jsii.Number(metricPeriod.Seconds())),
	})
}

// newDashboard answers the on-call questions at a glance: what came in and
// how it ended, how late, how long drains take, what is stuck, and what is
// waiting in the dead-letter queue.
func newDashboard(s constructs.Construct, dlq awssqs.Queue) awscloudwatch.Dashboard {
	var outcomes []awscloudwatch.IMetric
	for _, o := range recordOutcomes {
		m := emf("Records", "Sum", map[string]string{"outcome": o})
		outcomes = append(outcomes, m.With(&awscloudwatch.MetricOptions{Label: jsii.String(o)}))
	}
	graph := func(title string, left ...awscloudwatch.IMetric) awscloudwatch.IWidget {
		return awscloudwatch.NewGraphWidget(&awscloudwatch.GraphWidgetProps{Title: jsii.String(title), Left: &left, Width: jsii.Number(8)})
	}
	errors := awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
		Expression: jsii.String(`SEARCH('{` + metricsNamespace + `,class} MetricName="Errors"', 'Sum', 60)`),
		Label:      jsii.String("errors by class"),
		Period:     awscdk.Duration_Minutes(jsii.Number(1)),
	})
	row := func(ws ...awscloudwatch.IWidget) *[]awscloudwatch.IWidget { return &ws }
	return awscloudwatch.NewDashboard(s, jsii.String("Dashboard"), &awscloudwatch.DashboardProps{
		DefaultInterval: awscdk.Duration_Hours(jsii.Number(3)),
		Widgets: &[]*[]awscloudwatch.IWidget{
			row(
				graph("Records by outcome", outcomes...),
				graph("Queue latency (ms)", emf("QueueLatency", "p50", nil), emf("QueueLatency", "p99", nil)),
				graph("Drain duration (ms)", emf("DrainDuration", "p50", nil), emf("DrainDuration", "p99", nil)),
			),
			row(
				graph("Stuck pods", emf("PodsBlocked", "Sum", nil), emf("PodsTerminating", "Sum", nil),
					emf("DeadlineHit", "Sum", nil), emf("DrainsUnfinished", "Sum", nil)),
				graph("Dead-letter queue depth", dlq.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{
					Statistic: jsii.String("Maximum"), Period: awscdk.Duration_Minutes(jsii.Number(1))})),
				graph("Errors and lifecycle hooks", errors,
					emf("HookCompletions", "Sum", map[string]string{"outcome": "ok"}),
					emf("HookCompletions", "Sum", map[string]string{"outcome": "error"})),
			),
		},
	})
}

// metricAlarms watch the function's own metrics: a drain the instance's
// deadline cut short (pods died with the instance), and drains blocked by
// disruption budgets for 15 minutes running.
func metricAlarms(s constructs.Construct) []awscloudwatch.Alarm {
	five := awscdk.Duration_Minutes(jsii.Number(5))
	return []awscloudwatch.Alarm{
		emf("DeadlineHit", "Sum", nil).With(&awscloudwatch.MetricOptions{Period: five}).
			CreateAlarm(s, jsii.String("DeadlineHitAlarm"), &awscloudwatch.CreateAlarmOptions{
				AlarmDescription:   jsii.String("A drain did not finish before the instance's deadline: pods were still on the node when it went"),
				Threshold:          jsii.Number(1),
				ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
				EvaluationPeriods:  jsii.Number(1),
				TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
			}),
		emf("PodsBlocked", "Maximum", nil).With(&awscloudwatch.MetricOptions{Period: five}).
			CreateAlarm(s, jsii.String("DrainBlockedAlarm"), &awscloudwatch.CreateAlarmOptions{
				AlarmDescription:   jsii.String("PodDisruptionBudgets have blocked a drain for 15 minutes: see DrainBlocked events on the node"),
				Threshold:          jsii.Number(1),
				ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
				EvaluationPeriods:  jsii.Number(3),
				TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
			}),
	}
}
