package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// ruleSpec is one EventBridge rule: what it matches and why.
type ruleSpec struct {
	id, description string
	pattern         *awsevents.EventPattern
}

// ruleSpecs returns the rules for p. State changes are limited to the states
// the handler acts on; lifecycle actions to the configured groups.
func ruleSpecs(p Props) []ruleSpec {
	specs := []ruleSpec{
		{"SpotInterruptionRule", "Spot interruption warnings (two minutes' notice)", &awsevents.EventPattern{
			Source:     jsii.Strings("aws.ec2"),
			DetailType: jsii.Strings("EC2 Spot Instance Interruption Warning"),
		}},
		{"RebalanceRule", "Spot rebalance recommendations", &awsevents.EventPattern{
			Source:     jsii.Strings("aws.ec2"),
			DetailType: jsii.Strings("EC2 Instance Rebalance Recommendation"),
		}},
		{"StateChangeRule", "Instances stopping or terminating, and running again (to give their nodes back)", &awsevents.EventPattern{
			Source:     jsii.Strings("aws.ec2"),
			DetailType: jsii.Strings("EC2 Instance State-change Notification"),
			Detail: &map[string]any{
				"state": []string{"stopping", "stopped", "shutting-down", "terminated", "pending", "running"},
			},
		}},
		{"CapacityReservationRule", "Interruptible Capacity Reservation interruption warnings (two minutes' notice)", &awsevents.EventPattern{
			Source:     jsii.Strings("aws.ec2"),
			DetailType: jsii.Strings("EC2 Capacity Reservation Instance Interruption Warning"),
		}},
		// AWS's documentation spells this detail-type both ways; the
		// warning names the reservation, whose instances the handler lists.
		{"CapacityBlockRule", "Capacity Block expiration warnings (40 minutes before the block ends)", &awsevents.EventPattern{
			Source:     jsii.Strings("aws.ec2"),
			DetailType: jsii.Strings("Capacity Block Expiration Warning", "Capacity Block Reservation Expiration Warning"),
		}},
		{"ScheduledChangeRule", "AWS Health scheduled changes for EC2 (retirement, maintenance)", &awsevents.EventPattern{
			Source:     jsii.Strings("aws.health"),
			DetailType: jsii.Strings("AWS Health Event"),
			Detail: &map[string]any{
				"service":           []string{"EC2"},
				"eventTypeCategory": []string{"scheduledChange"},
			},
		}},
	}
	if groups := groupMatchers(p); len(groups) > 0 {
		specs = append(specs, ruleSpec{"ASGLifecycleRule", "Auto Scaling terminate lifecycle actions of the configured groups", &awsevents.EventPattern{
			Source:     jsii.Strings("aws.autoscaling"),
			DetailType: jsii.Strings("EC2 Instance-terminate Lifecycle Action"),
			Detail:     hookDetail(p, groups),
		}})
		// A launch hook left to time out ends in ABANDON by default,
		// which terminates the new instance: the function completes it.
		specs = append(specs, ruleSpec{"ASGLaunchLifecycleRule", "Auto Scaling launch lifecycle actions of the configured groups", &awsevents.EventPattern{
			Source:     jsii.Strings("aws.autoscaling"),
			DetailType: jsii.Strings("EC2 Instance-launch Lifecycle Action"),
			Detail:     hookDetail(p, groups),
		}})
	}
	return specs
}

// groupMatchers lists the exact names and the prefix as one EventBridge
// match array (its elements are ORed).
func groupMatchers(p Props) []any {
	var m []any
	for _, n := range p.ASGNames {
		m = append(m, n)
	}
	if p.ASGNamePrefix != "" {
		m = append(m, map[string]any{"prefix": p.ASGNamePrefix})
	}
	return m
}

// newRules routes every matching event to queue. allowRules lets
// events.amazonaws.com send only with one of the rules' ARNs as
// aws:SourceArn. Events EventBridge cannot deliver
// go to the dead-letter queue, whose alarm then fires.
func newRules(s constructs.Construct, p Props, queue, dlq awssqs.Queue) []awsevents.Rule {
	var rules []awsevents.Rule
	for _, spec := range ruleSpecs(p) {
		// Only events of the stack's own account: the default bus can
		// receive other accounts' events when its policy allows them.
		spec.pattern.Account = &[]*string{awscdk.Stack_Of(s).Account()}
		rules = append(rules, awsevents.NewRule(s, jsii.String(spec.id), &awsevents.RuleProps{
			Description:  jsii.String("Drainpipe: " + spec.description),
			EventPattern: spec.pattern,
			Targets:      &[]awsevents.IRuleTarget{queueTarget(p, queue, dlq)},
		}))
	}
	return rules
}

// queueTarget sends a rule's events to queue, and what EventBridge cannot
// deliver to dlq; allowRules lets it.
func queueTarget(p Props, queue, dlq awssqs.Queue) awsevents.IRuleTarget {
	return &queueRuleTarget{queue: queue, dlq: dlq, maxAge: p.targetMaxEventAge().Seconds()}
}
