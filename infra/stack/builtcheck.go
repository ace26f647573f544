package stack

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
)

// sqsMaxPolicy is the largest queue policy SQS accepts, in bytes: a bigger
// one fails the deploy, after the rules and function exist.
const sqsMaxPolicy = 8192

// Lengths that values unknown at synth can take once deployed, at most:
// the longest partition (aws-us-gov) and region, twelve digits, a stack
// name's 128 characters; any other reference (a rule's, role's or queue's
// ARN or name) 128, more than CloudFormation's generated names make.
var worstLengths = map[string]int{
	"AWS::Partition": 10, "AWS::Region": 14, "AWS::AccountId": 12, "AWS::URLSuffix": 20, "AWS::StackName": 128,
}

const worstReference = 128

// checkQueuePolicies holds each queue's policy, as deployed at worst, to
// SQS's limit. Every rule, sender role and operator role adds to it.
func checkQueuePolicies(c *Construct) error {
	var errs []error
	names := []string{"queue", "dead-letter queue", "cordon queue"} // c.queues()' order
	for i, queue := range c.queues() {
		name := names[i]
		// The policy CDK creates on the first AddToResourcePolicy.
		pol, ok := queue.Node().TryFindChild(jsii.String("Policy")).(awssqs.QueuePolicy)
		if !ok {
			continue
		}
		doc := awscdk.Stack_Of(c.Scope).Resolve(pol.Document().ToJSON())
		b, err := json.Marshal(worstCase(doc))
		if err != nil {
			return fmt.Errorf("measuring the %s policy: %w", name, err)
		}
		if len(b) > sqsMaxPolicy {
			errs = append(errs, fmt.Errorf("senderRoleArns, operatorRoleArns, queueAdminArns: the %s policy can reach %d bytes once deployed, over SQS's %d-byte limit "+
				"(%d sender roles, %d operator roles and %d queue admins listed, each named in several statements): list fewer",
				name, len(b), sqsMaxPolicy, len(c.Props.SenderRoleARNs), len(c.Props.OperatorRoleARNs), len(c.Props.QueueAdminARNs)))
		}
	}
	return errors.Join(errs...)
}

// worstCase replaces every CloudFormation reference in v by a string as
// long as its deployed value can be.
func worstCase(v any) any {
	switch v := v.(type) {
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = worstCase(e)
		}
		return out
	case map[string]any:
		if ref, ok := v["Ref"].(string); ok && len(v) == 1 {
			if n, ok := worstLengths[ref]; ok {
				return strings.Repeat("x", n)
			}
			return strings.Repeat("x", worstReference)
		}
		if j, ok := v["Fn::Join"].([]any); ok && len(v) == 1 && len(j) == 2 {
			sep, _ := j[0].(string)
			parts, _ := j[1].([]any)
			var s []string
			for _, p := range parts {
				s = append(s, fmt.Sprint(worstCase(p)))
			}
			return strings.Join(s, sep)
		}
		for k := range v {
			if len(v) == 1 && strings.HasPrefix(k, "Fn::") { // Fn::GetAtt and the like
				return strings.Repeat("x", worstReference)
			}
		}
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = worstCase(e)
		}
		return out
	}
	return v
}
