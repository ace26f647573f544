package stack

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
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
	for _, q := range []struct {
		name  string
		queue awssqs.Queue
	}{{"queue", c.Queue}, {"dead-letter queue", c.DeadLetterQueue}} {
		// The policy CDK creates on the first AddToResourcePolicy.
		pol, ok := q.queue.Node().TryFindChild(jsii.String("Policy")).(awssqs.QueuePolicy)
		if !ok {
			continue
		}
		doc := awscdk.Stack_Of(c.Scope).Resolve(pol.Document().ToJSON())
		b, err := json.Marshal(worstCase(doc))
		if err != nil {
			return fmt.Errorf("measuring the %s policy: %w", q.name, err)
		}
		if len(b) > sqsMaxPolicy {
			errs = append(errs, fmt.Errorf("senderRoleArns, operatorRoleArns: the %s policy can reach %d bytes once deployed, over SQS's %d-byte limit "+
				"(%d sender and %d operator roles listed, each named in several statements): list fewer roles",
				q.name, len(b), sqsMaxPolicy, len(c.Props.SenderRoleARNs), len(c.Props.OperatorRoleARNs)))
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

// senderAccounts lists the accounts of the sender roles.
func (p Props) senderAccounts() []string {
	var accounts []string
	for _, r := range p.SenderRoleARNs {
		if parts := strings.Split(r, ":"); len(parts) > 4 && !slices.Contains(accounts, parts[4]) {
			accounts = append(accounts, parts[4])
		}
	}
	slices.Sort(accounts)
	return accounts
}

// senderAccountProblem is why senders of another account are refused: the
// queue policy only denies; within the queue's account a role's own
// policy is enough to send, but another account's role needs an Allow in
// the queue policy, which the stack does not give (it would let that
// account feed the function notices it trusts as AWS's). A dead-letter
// redrive, the senders' use, runs in the queue's account anyway.
const senderAccountProblem = "only roles of the stack's own account can send (the queue policy allows no other account, and a redrive runs in the queue's account)"

// checkSenderAccount refuses sender roles of another account than the
// stack's, when the stack's account is known at synth (an environment-
// agnostic stack's is not: Validate then only holds the roles to one
// account).
func checkSenderAccount(c *Construct) error {
	account := awscdk.Stack_Of(c.Scope).Account()
	if *awscdk.Token_IsUnresolved(account) {
		return nil
	}
	var foreign []string
	for _, a := range c.Props.senderAccounts() {
		if a != *account {
			foreign = append(foreign, a)
		}
	}
	if len(foreign) > 0 {
		return fmt.Errorf("senderRoleArns: roles of account %s, not the stack's (%s): %s", strings.Join(foreign, ", "), *account, senderAccountProblem)
	}
	return nil
}
