package stack

import (
	"errors"
	"fmt"
	"regexp"
	"slices"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// Construct is Drainpipe inside any stack: queue, cordon queue and
// dead-letter queue, rules, function, IAM, access entries, alarms and
// dashboard. Its fields are the resources, for the caller to wire further
// (another rule into Queue, the function's Role into a cluster's aws-auth,
// more alarms on AlarmTopic). Each concern is one function taking the Construct, so a
// new one is one more call in build.
type Construct struct {
	// Scope holds every resource: the construct's own node, or the stack
	// itself when built by New.
	Scope           constructs.Construct
	Props           Props
	Queue           awssqs.Queue
	DeadLetterQueue awssqs.Queue
	Rules           []awsevents.Rule
	Function        awslambda.Function
	Role            awsiam.Role
	// CordonQueue receives a copy of each notice the interruption rules
	// send Queue, which the function only cordons from (cordon.go); nil
	// when Props.CordonConcurrency is negative.
	CordonQueue awssqs.Queue
	// cordonRules are the Rules that also send to CordonQueue: all but
	// the sweep's, which is the work queue's alone.
	cordonRules []awsevents.Rule
	// NotificationRole is the role lifecycle hooks notify the queue with,
	// nil unless Props.ASGNotificationRole.
	NotificationRole awsiam.IRole
	// AlarmTopic receives every alarm and OK action: Props.AlarmTopicARN,
	// or a topic created here when that is empty.
	AlarmTopic awssns.ITopic
	Alarms     []awscloudwatch.Alarm
	// QueueControlRule notifies AlarmTopic of every change to the queues'
	// attributes, permissions or tags, and of their deletion.
	QueueControlRule awsevents.Rule
	Dashboard        awscloudwatch.Dashboard
	// MetricsStack is the value of dimension `stack` on every metric the
	// function publishes (namespace Drainpipe; DRAINPIPE_METRICS_STACK):
	// filter on it to build more alarms on this deployment's metrics.
	MetricsStack *string
}

// NewConstruct validates props and adds Drainpipe to scope under id. Two
// constructs with different ids fit in one stack. Invalid props return an
// error listing every problem, before any resource is created.
func NewConstruct(scope constructs.Construct, id string, props Props) (*Construct, error) {
	// The id names the queue (<stack>-<id>-queue) and the metrics.
	var idErr error
	if !constructID.MatchString(id) {
		idErr = fmt.Errorf("id: %q is not 1–64 letters, digits, '-' or '_' (it names the queue and the metrics)", id)
	}
	if err := errors.Join(idErr, props.Validate()); err != nil {
		return nil, fmt.Errorf("validating props: %w", err)
	}
	return build(constructs.NewConstruct(scope, jsii.String(id)), props)
}

var constructID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// queues are the construct's queues, the cordon queue last when there is
// one: the index names each one's policy statements, which must not
// change on a deployed queue.
func (c *Construct) queues() []awssqs.Queue {
	if c.CordonQueue == nil {
		return []awssqs.Queue{c.Queue, c.DeadLetterQueue}
	}
	return []awssqs.Queue{c.Queue, c.DeadLetterQueue, c.CordonQueue}
}

// build adds the resources to scope, one concern at a time, then checks
// what only the built stack shows (the queue policies' size, the senders'
// account), every problem at once.
func build(scope constructs.Construct, p Props) (*Construct, error) {
	c := &Construct{Scope: scope, Props: p}
	c.Queue, c.CordonQueue, c.DeadLetterQueue = newQueues(scope, p)
	c.Rules = newRules(scope, p, c.DeadLetterQueue, c.Queue, c.CordonQueue)
	if c.CordonQueue != nil {
		c.cordonRules = slices.Clone(c.Rules)
	}
	c.Function, c.Role = newFunction(scope, p, c.Queue)
	addCordonSource(c)
	setCodeSigning(c)
	c.MetricsStack = metricsStack(scope, p)
	c.Function.AddEnvironment(jsii.String("DRAINPIPE_METRICS_STACK"), c.MetricsStack, nil)
	newSweep(c)
	allowRules(c)
	c.NotificationRole = newAccess(scope, p, c.Role, c.Queue)
	topics := subscribeTopics(c)
	denyOtherSenders(p, c.Rules, topics, c.NotificationRole, c.Queue, c.DeadLetterQueue)
	if c.CordonQueue != nil {
		// Lifecycle hooks and topics notify the work queue only.
		denyOtherSenders(p, c.cordonRules, nil, nil, c.CordonQueue)
	}
	guardConsumers(c)
	guardQueueControl(c)
	pinTrustedAccount(c)
	newAlarms(c)
	warnUnsubscribedAlarms(c)
	c.QueueControlRule = queueControlAlarm(c)
	c.Dashboard = newDashboard(c)
	newOutputs(c)
	acknowledgeLint(c)
	if err := errors.Join(checkQueuePolicies(c), checkTrustedAccount(c)); err != nil {
		return nil, fmt.Errorf("validating the stack: %w", err)
	}
	return c, nil
}

// newOutputs states what an operator wires or looks at after deploying.
func newOutputs(c *Construct) {
	out := func(id string, value *string, desc string) {
		awscdk.NewCfnOutput(c.Scope, jsii.String(id), &awscdk.CfnOutputProps{Value: value, Description: jsii.String(desc)})
	}
	out("QueueUrl", c.Queue.QueueUrl(), "Queue the rules feed and the function consumes")
	out("QueueArn", c.Queue.QueueArn(), "Target for lifecycle hooks that notify SQS directly")
	out("DeadLetterQueueUrl", c.DeadLetterQueue.QueueUrl(), "Messages that failed every attempt")
	if c.CordonQueue != nil {
		out("CordonQueueUrl", c.CordonQueue.QueueUrl(), "Copies of the rules' notices, which the function only cordons from")
	}
	out("FunctionName", c.Function.FunctionName(), "The handler")
	out("RoleArn", c.Role.RoleArn(), "Map this role to group drainpipe on clusters using aws-auth")
	out("DashboardName", c.Dashboard.DashboardName(), "CloudWatch dashboard: records by outcome, latency, drains, dead-letter depth")
	out("LogGroupName", c.Function.LogGroup().LogGroupName(), "The function's JSON logs")
}
