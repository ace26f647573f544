package stack

import (
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/jsii-runtime-go"
)

// The function's embedded-format metrics (internal/metrics): namespace,
// names and the outcomes a record can end with.
const (
	metricsNamespace = "Drainpipe"
	metricsStackDim  = "stack" // internal/metrics.DimStack
	metricPeriod     = time.Minute
)

var recordOutcomes = []string{"done", "ignored", "rejected", "retry"}

// emf is one of this deployment's function metrics (filtered on its
// DRAINPIPE_METRICS_STACK dimension, so another stack's never mix in); dims
// empty means the aggregate the function publishes with no other
// dimension.
func (c *Construct) emf(name, stat string, dims map[string]string) awscloudwatch.Metric {
	m := map[string]*string{metricsStackDim: c.MetricsStack}
	for k, v := range dims {
		m[k] = jsii.String(v)
	}
	return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
		Namespace: jsii.String(metricsNamespace), MetricName: jsii.String(name), Statistic: jsii.String(stat),
		DimensionsMap: &m, Period: awscdk.Duration_Seconds(jsii.Number(metricPeriod.Seconds())),
	})
}

// newDashboard answers the on-call questions at a glance: what came in and
// how it ended, how late (and how late the cordon copies), how long drains
// take, what is stuck, and what is waiting in the dead-letter queue.
func newDashboard(c *Construct) awscloudwatch.Dashboard {
	s, dlq, emf := c.Scope, c.DeadLetterQueue, c.emf
	var outcomes []awscloudwatch.IMetric
	for _, o := range recordOutcomes {
		m := emf("Records", "Sum", map[string]string{"outcome": o})
		outcomes = append(outcomes, m.With(&awscloudwatch.MetricOptions{Label: jsii.String(o)}))
	}
	graph := func(title string, left ...awscloudwatch.IMetric) awscloudwatch.IWidget {
		return awscloudwatch.NewGraphWidget(&awscloudwatch.GraphWidgetProps{Title: jsii.String(title), Left: &left, Width: jsii.Number(8)})
	}
	errors := awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
		Expression: jsii.String(`SEARCH('{` + metricsNamespace + `,class,` + metricsStackDim + `} MetricName="Errors" ` +
			metricsStackDim + `="` + *c.MetricsStack + `"', 'Sum', 60)`),
		Label:  jsii.String("errors by class"),
		Period: awscdk.Duration_Minutes(jsii.Number(1)),
	})
	row := func(ws ...awscloudwatch.IWidget) *[]awscloudwatch.IWidget { return &ws }
	// How long the longest-blocked drain has been (s), what DrainBlockedAlarm
	// watches, on the right axis of the counts.
	stuck := func(w awscloudwatch.IWidget, blockedFor awscloudwatch.IMetric) awscloudwatch.IWidget {
		w.(awscloudwatch.GraphWidget).AddRightMetric(blockedFor)
		return w
	}
	latency := graph("Queue latency (ms)", emf("QueueLatency", "p50", nil), emf("QueueLatency", "p99", nil))
	if c.CordonQueue != nil {
		// What CordonLagAlarm watches, in seconds, on the right axis.
		latency.(awscloudwatch.GraphWidget).AddRightMetric(c.CordonQueue.MetricApproximateAgeOfOldestMessage(&awscloudwatch.MetricOptions{
			Statistic: jsii.String("Maximum"), Period: awscdk.Duration_Minutes(jsii.Number(1)), Label: jsii.String("oldest cordon copy (s)")}))
	}
	return awscloudwatch.NewDashboard(s, jsii.String("Dashboard"), &awscloudwatch.DashboardProps{
		DefaultInterval: awscdk.Duration_Hours(jsii.Number(3)),
		Widgets: &[]*[]awscloudwatch.IWidget{
			row(
				graph("Records by outcome", outcomes...),
				latency,
				graph("Drain duration (ms)", emf("DrainDuration", "p50", nil), emf("DrainDuration", "p99", nil)),
			),
			row(
				stuck(graph("Stuck pods", emf("PodsBlocked", "Sum", nil), emf("PodsTerminating", "Sum", nil),
					emf("DeadlineHit", "Sum", nil), emf("DrainsUnfinished", "Sum", nil)), emf("DrainBlockedFor", "Maximum", nil)),
				graph("Dead-letter queue depth", dlq.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{
					Statistic: jsii.String("Maximum"), Period: awscdk.Duration_Minutes(jsii.Number(1))})),
				graph("Errors and lifecycle hooks", errors,
					emf("HookCompletions", "Sum", map[string]string{"outcome": "ok"}),
					emf("HookCompletions", "Sum", map[string]string{"outcome": "error"})),
			),
		},
	})
}
