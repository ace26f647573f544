package stack

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/jsii-runtime-go"
)

// newSweep adds the periodic sweep (docs/sweep.md): a schedule rule whose
// Scheduled Events reach the function through the same queue as every
// notice, so retries, the dead-letter queue and the concurrency cap apply.
// The rule joins c.Rules, so the queue policy lets it send; the function
// learns its ARN and acts on no other rule's Scheduled Event. The IAM
// action it needs is in grantHandler, beside ec2:DescribeInstances.
// Nothing is added when Props.SweepInterval is 0. Call before
// denyOtherSenders.
func newSweep(c *Construct) {
	p := c.Props
	if p.SweepInterval <= 0 {
		return
	}
	rule := awsevents.NewRule(c.Scope, jsii.String("SweepRule"), &awsevents.RuleProps{
		Description: jsii.String("Drainpipe: the periodic sweep, which repairs what a lost notice left"),
		// Written out: CDK's Schedule_Rate would turn 60 into rate(1 hour).
		Schedule: awsevents.Schedule_Expression(jsii.String(sweepSchedule(p.SweepInterval))),
		Targets:  &[]awsevents.IRuleTarget{queueTarget(p, c.Queue, c.DeadLetterQueue)},
	})
	c.Rules = append(c.Rules, rule)
	c.Function.AddEnvironment(jsii.String("DRAINPIPE_SWEEP_RULE"), rule.RuleArn(), nil)
}

// sweepSchedule is EventBridge's rate expression for every n minutes,
// whose unit must be singular for 1.
func sweepSchedule(n int) string {
	if n == 1 {
		return "rate(1 minute)"
	}
	return fmt.Sprintf("rate(%d minutes)", n)
}
