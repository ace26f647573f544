package stack

import (
	"strconv"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// valueParams adds the standalone template's parameters for settings that
// only set a value (an environment variable or a property), so changing
// them needs no new synth. Defaults are the validated props. Call after
// build. What stays fixed is listed in docs/deploy.md: anything that adds
// or removes resources or policy statements.
func valueParams(s awscdk.Stack, c *Construct, p Props) {
	fn := c.Function.Node().DefaultChild().(awslambda.CfnFunction)
	tag := awscdk.NewCfnParameter(s, jsii.String("RequiredTag"), &awscdk.CfnParameterProps{
		Type: jsii.String("String"), Default: jsii.String(p.RequiredTag),
		Description: jsii.String("Act only on instances with this tag: key or key=value (empty: every instance)"),
		// The tag key's characters, as validate checks them at synth.
		AllowedPattern: jsii.String(`^([\p{L}\p{Z}\p{N}_.:/+\-@]{1,128}(=[\p{L}\p{Z}\p{N}_.:/+\-@=]{0,256})?)?$`),
	})
	// The function reads an empty variable as unset.
	fn.AddPropertyOverride(jsii.String("Environment.Variables.DRAINPIPE_REQUIRED_TAG"), tag.ValueAsString())

	maxConc := 1000
	if p.ReservedConcurrency > 0 {
		// More pollers than reserved executions would throttle the event
		// sources; the cordon queue's take their share first.
		maxConc = p.ReservedConcurrency - p.cordonConcurrency()
	}
	mc := awscdk.NewCfnParameter(s, jsii.String("MaxConcurrency"), &awscdk.CfnParameterProps{
		Type: jsii.String("Number"), Default: jsii.Number(float64(p.MaxConcurrency)),
		MinValue: jsii.Number(2), MaxValue: jsii.Number(float64(maxConc)),
		Description: jsii.String("The most concurrent function instances the queue's event source invokes (Lambda allows 2-1000)"),
	})
	for _, child := range *c.Function.Node().Children() {
		m, ok := child.(awslambda.EventSourceMapping)
		if !ok {
			continue
		}
		// The work queue's only: the cordon queue's keeps cordonConcurrency.
		if cfn := m.Node().DefaultChild().(awslambda.CfnEventSourceMapping); *cfn.EventSourceArn() == *c.Queue.QueueArn() {
			cfn.AddPropertyOverride(jsii.String("ScalingConfig.MaximumConcurrency"), mc.ValueAsNumber())
		}
	}
	// The instances share the cluster's eviction rate among this many.
	fn.AddPropertyOverride(jsii.String("Environment.Variables.DRAINPIPE_MAX_CONCURRENCY"), mc.ValueAsString())
	if p.ReservedConcurrency == 0 {
		// Reserved concurrency follows maxConcurrency unless set on its own.
		fn.AddPropertyOverride(jsii.String("ReservedConcurrentExecutions"), reservedFollowing(mc, maxConc, p.cordonConcurrency()))
	}
	if p.AlarmTopicARN == "" {
		alarmEmailParam(s, c, p)
	}
}

// reservedFollowing is the reserved concurrency that follows the
// MaxConcurrency parameter mc (at most maxConc): mc, or with the cordon
// queue mc plus cordon. CloudFormation cannot add, so the sum is the
// element at index mc of the sums for every value mc can take.
func reservedFollowing(mc awscdk.CfnParameter, maxConc, cordon int) any {
	if cordon == 0 {
		return mc.ValueAsNumber()
	}
	sums := make([]string, maxConc+1)
	for i := range sums {
		sums[i] = strconv.Itoa(i + cordon)
	}
	return map[string]any{"Fn::Select": []any{mc.ValueAsString(), map[string]any{"Fn::Split": []any{",", strings.Join(sums, ",")}}}}
}

// alarmEmailParam subscribes AlarmEmail to the alarm topic the stack
// creates, the subscription existing only when the parameter is not empty.
func alarmEmailParam(s awscdk.Stack, c *Construct, p Props) {
	email := awscdk.NewCfnParameter(s, jsii.String("AlarmEmail"), &awscdk.CfnParameterProps{
		Type: jsii.String("String"), Default: jsii.String(p.AlarmEmail),
		Description:    jsii.String("An email address subscribed to the alarm topic (empty: none; confirm the email AWS sends)"),
		AllowedPattern: jsii.String(`^([^@\s]+@[^@\s]+\.[^@\s]+)?$`),
	})
	cond := awscdk.NewCfnCondition(s, jsii.String("HasAlarmEmail"), &awscdk.CfnConditionProps{
		Expression: awscdk.Fn_ConditionNot(awscdk.Fn_ConditionEquals(email.ValueAsString(), jsii.String(""))),
	})
	var sub awssns.CfnSubscription
	for _, child := range *c.Scope.Node().FindAll(constructs.ConstructOrder_PREORDER) {
		if cs, ok := child.(awssns.CfnSubscription); ok && cs.Protocol() != nil && *cs.Protocol() == "email" {
			sub = cs
		}
	}
	if sub == nil {
		sub = awssns.NewCfnSubscription(s, jsii.String("AlarmEmailSubscription"), &awssns.CfnSubscriptionProps{
			Protocol: jsii.String("email"), TopicArn: c.AlarmTopic.TopicArn(), Endpoint: email.ValueAsString(),
		})
	}
	sub.AddPropertyOverride(jsii.String("Endpoint"), email.ValueAsString())
	sub.CfnOptions().SetCondition(cond)
	if out, ok := s.Node().TryFindChild(jsii.String("AlarmTopicArn")).(awscdk.CfnOutput); ok {
		out.SetDescription(jsii.String("Drainpipe's alarms notify this topic; the AlarmEmail parameter, when set, is subscribed (confirm the email AWS sends)"))
	}
}
