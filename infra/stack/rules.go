package stack

import (
	"slices"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/drainpipe/drainpipe/internal/event"
)

// ruleSpec is one EventBridge rule: what it matches and why.
type ruleSpec struct {
	id, description string
	pattern         *awsevents.EventPattern
}

// ruleSpecs returns the rules for p, one per kind the kinds table gives a
// rule: EC2's own notices first, then other services', then the served
// groups' lifecycle actions, only when some groups are served. The order
// is the queue policy's list of rules: kept, a deployed stack's policy
// does not change.
func ruleSpecs(p Props) []ruleSpec {
	var ec2, others, perGroup []ruleSpec
	groups := groupMatchers(p)
	for _, k := range event.Table() {
		if k.Rule == nil {
			continue
		}
		pattern := &awsevents.EventPattern{Source: jsii.Strings(k.Source), DetailType: jsii.Strings(k.DetailTypes...)}
		spec := ruleSpec{k.Rule.ID, k.Rule.Description, pattern}
		switch {
		case k.Rule.ServedGroups:
			if len(groups) > 0 {
				pattern.Detail = hookDetail(p, groups)
				perGroup = append(perGroup, spec)
			}
		case k.Source == "aws.ec2":
			pattern.Detail = detailMatch(k.Rule.Detail)
			ec2 = append(ec2, spec)
		default:
			pattern.Detail = detailMatch(k.Rule.Detail)
			others = append(others, spec)
		}
	}
	return slices.Concat(ec2, others, perGroup)
}

// servedGroupsRule reports whether the rule with construct ID id matches
// the served groups' lifecycle actions.
func servedGroupsRule(id string) bool {
	return slices.ContainsFunc(event.Table(), func(k event.KindInfo) bool {
		return k.Rule != nil && k.Rule.ServedGroups && k.Rule.ID == id
	})
}

// detailMatch is an event pattern's detail matching any of each field's
// values; nil for none.
func detailMatch(fields map[string][]string) *map[string]any {
	if fields == nil {
		return nil
	}
	m := make(map[string]any, len(fields))
	for k, v := range fields {
		m[k] = v
	}
	return &m
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

// newRules routes every matching event to each of queues (the work queue,
// and the cordon queue unless it is nil): two of EventBridge's five
// targets per rule. allowRules lets events.amazonaws.com send only with
// one of the rules' ARNs as aws:SourceArn. Events EventBridge cannot
// deliver go to the dead-letter queue, whose alarm then fires.
func newRules(s constructs.Construct, p Props, dlq awssqs.Queue, queues ...awssqs.Queue) []awsevents.Rule {
	var targets []awsevents.IRuleTarget
	for _, q := range queues {
		if q != nil {
			targets = append(targets, queueTarget(p, q, dlq))
		}
	}
	var rules []awsevents.Rule
	for _, spec := range ruleSpecs(p) {
		// Only events of the stack's own account: the default bus can
		// receive other accounts' events when its policy allows them.
		spec.pattern.Account = &[]*string{awscdk.Stack_Of(s).Account()}
		rules = append(rules, awsevents.NewRule(s, jsii.String(spec.id), &awsevents.RuleProps{
			Description:  jsii.String("Drainpipe: " + spec.description),
			EventPattern: spec.pattern,
			Targets:      &targets,
		}))
	}
	return rules
}

// queueTarget sends a rule's events to queue, and what EventBridge cannot
// deliver to dlq; allowRules lets it.
func queueTarget(p Props, queue, dlq awssqs.Queue) awsevents.IRuleTarget {
	return &queueRuleTarget{queue: queue, dlq: dlq, maxAge: p.targetMaxEventAge().Seconds()}
}
