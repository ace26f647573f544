package stack

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
)

// trusted is one context key whose ARNs the queue trusts: what they send,
// or publish, the function acts on as AWS's own notices.
type trusted struct {
	key, noun string // noun: "roles" or "topics"
	arns      []string
	problem   string
}

// Why each kind of trusted ARN must be of the stack's own account.
const (
	senderAccountProblem = "only roles of the stack's own account can send (the queue policy allows no other account, and a redrive runs in the queue's account)"
	// An operator role is given an explicit Allow to send to the queue and
	// to take from the dead-letter queue: another account's role would
	// hold it, and could forge interruptions and lifecycle actions.
	operatorAccountProblem = "only roles of the stack's own account may operate the queues (they are allowed to send to the queue: another account could forge interruptions)"
	// Whoever may publish to a subscribed topic feeds the function; a
	// topic of another account is governed by that account's policy.
	adminAccountProblem = "only principals of the stack's own account may administer the queues (the queue policy gives no other account an Allow)"
	topicAccountProblem = "only topics of the stack's own account may feed the queue (whoever may publish to a topic feeds the function, and another account decides who may publish to its topics)"
)

func (p Props) trustedARNs() []trusted {
	var deployer []string
	if p.DeployerRoleARN != "" {
		deployer = []string{p.DeployerRoleARN}
	}
	return []trusted{
		{"senderRoleArns", "roles", p.SenderRoleARNs, senderAccountProblem},
		{"operatorRoleArns", "roles", p.OperatorRoleARNs, operatorAccountProblem},
		{"snsTopicArns", "topics", p.SNSTopicARNs, topicAccountProblem},
		{"queueAdminArns", "principals", p.QueueAdminARNs, adminAccountProblem},
		{"deployerRoleArn", "roles", deployer, adminAccountProblem},
	}
}

// arnAccounts lists the accounts of arns, sorted, once each.
func arnAccounts(arns []string) []string {
	var accounts []string
	for _, a := range arns {
		if parts := strings.Split(a, ":"); len(parts) > 4 && parts[4] != "" && !slices.Contains(accounts, parts[4]) {
			accounts = append(accounts, parts[4])
		}
	}
	slices.Sort(accounts)
	return accounts
}

// checkOneAccount holds every trusted role and topic to one account, the
// stack's, even when the stack's account is unknown at synth: each key
// whose ARNs span accounts, or differ from another key's, is named.
func (p Props) checkOneAccount() []error {
	var errs []error
	var all []string
	for _, t := range p.trustedARNs() {
		all = append(all, t.arns...)
		if accounts := arnAccounts(t.arns); len(accounts) > 1 {
			errs = append(errs, fmt.Errorf("%s: %s of %d accounts (%s): %s", t.key, t.noun, len(accounts), strings.Join(accounts, ", "), t.problem))
		}
	}
	if len(errs) > 0 {
		return errs
	}
	if accounts := arnAccounts(all); len(accounts) > 1 {
		var keys []string
		for _, t := range p.trustedARNs() {
			if len(t.arns) > 0 {
				keys = append(keys, fmt.Sprintf("%s in %s", t.key, strings.Join(arnAccounts(t.arns), ", ")))
			}
		}
		errs = append(errs, fmt.Errorf("%s: ARNs of %d accounts: every trusted role and topic must be of the stack's own account",
			strings.Join(keys, "; "), len(accounts)))
	}
	return errs
}

// checkTrustedAccount refuses sender and operator roles and subscribed
// topics of another account than the stack's, when the stack's account is
// known at synth (an environment-agnostic stack's is not: Validate then
// holds them to one account, and the queue policy's Allows name the
// stack's account).
func checkTrustedAccount(c *Construct) error {
	account := awscdk.Stack_Of(c.Scope).Account()
	if *awscdk.Token_IsUnresolved(account) {
		return nil
	}
	var errs []error
	for _, t := range c.Props.trustedARNs() {
		var foreign []string
		for _, a := range arnAccounts(t.arns) {
			if a != *account {
				foreign = append(foreign, a)
			}
		}
		if len(foreign) > 0 {
			errs = append(errs, fmt.Errorf("%s: %s of account %s, not the stack's (%s): %s", t.key, t.noun, strings.Join(foreign, ", "), *account, t.problem))
		}
	}
	return errors.Join(errs...)
}

// pinTrustedAccount makes the template of a stack whose account is unknown
// at synth refuse, before CloudFormation creates anything, a deploy to
// another account than its trusted roles' and topics' (Validate holds them
// to one): synth cannot tell, and a topic of another account would
// otherwise feed the queue.
func pinTrustedAccount(c *Construct) {
	stack := awscdk.Stack_Of(c.Scope)
	if !*awscdk.Token_IsUnresolved(stack.Account()) {
		return
	}
	var all []string
	for _, t := range c.Props.trustedARNs() {
		all = append(all, t.arns...)
	}
	accounts := arnAccounts(all)
	if len(accounts) != 1 {
		return
	}
	awscdk.NewCfnRule(stack, jsii.String("TrustedAccount"), &awscdk.CfnRuleProps{
		Assertions: &[]*awscdk.CfnRuleAssertion{{
			Assert: awscdk.Fn_ConditionEquals(stack.Account(), jsii.String(accounts[0])),
			AssertDescription: jsii.String(fmt.Sprintf("senderRoleArns, operatorRoleArns, snsTopicArns, queueAdminArns and deployerRoleArn "+
				"are of account %s: deploy the stack there (%s)", accounts[0], "a role or topic of another account could feed the function")),
		}},
	})
}
