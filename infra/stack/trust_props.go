package stack

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/aws/jsii-runtime-go"
)

var (
	roleARN   = regexp.MustCompile(`^arn:aws[a-z-]*:iam::[0-9]{12}:role/[A-Za-z0-9+=,.@_/-]{1,512}$`)
	adminARN  = regexp.MustCompile(`^arn:aws[a-z-]*:iam::[0-9]{12}:(role|user)/[A-Za-z0-9+=,.@_/-]{1,512}$`)
	subnetID  = regexp.MustCompile(`^subnet-[0-9a-f]{8}([0-9a-f]{9})?$`)
	groupID   = regexp.MustCompile(`^sg-[0-9a-f]{8}([0-9a-f]{9})?$`)
	kmsKeyARN = regexp.MustCompile(`^arn:aws[a-z-]*:kms:[a-z0-9-]+:[0-9]{12}:key/([0-9a-f-]{36}|mrk-[0-9a-f]{32})$`)
)

// maxEventAge is EventBridge's longest maximum event age.
const maxEventAge = 24 * time.Hour

// validateTrust checks the props that decide who may feed the queue and
// where the function runs.
func (p Props) validateTrust() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	// The role's only use is direct notifications of handled groups;
	// without groups nothing would use it but someone sending by hand.
	if p.ASGNotificationRole && len(p.ASGNames) == 0 && p.ASGNamePrefix == "" {
		bad("asgNotificationRole: needs asgNames or asgNamePrefix (no group is handled without them)")
	}
	for _, r := range p.SenderRoleARNs {
		if !roleARN.MatchString(r) {
			bad("senderRoleArns: %q is not an IAM role ARN", r)
		}
	}
	for _, r := range p.OperatorRoleARNs {
		if !roleARN.MatchString(r) {
			bad("operatorRoleArns: %q is not an IAM role ARN", r)
		}
	}
	for _, a := range p.QueueAdminARNs {
		if !adminARN.MatchString(a) {
			bad("queueAdminArns: %q is not the ARN of an IAM role or user (no wildcards)", a)
		}
	}
	if p.DeployerRoleARN != "" && !roleARN.MatchString(p.DeployerRoleARN) {
		bad("deployerRoleArn: %q is not an IAM role ARN", p.DeployerRoleARN)
	}
	for _, t := range p.SNSTopicARNs {
		if !topicARN.MatchString(t) || strings.HasSuffix(t, ".fifo") {
			bad("snsTopicArns: %q is not the ARN of a standard SNS topic (a standard queue cannot subscribe to a FIFO topic)", t)
		}
	}
	errs = append(errs, p.checkOneAccount()...)
	for _, id := range p.SubnetIDs {
		if !subnetID.MatchString(id) {
			bad("subnetIds: %q is not a subnet id", id)
		}
	}
	for _, id := range p.SecurityGroupIDs {
		if !groupID.MatchString(id) {
			bad("securityGroupIds: %q is not a security group id", id)
		}
	}
	switch {
	case len(p.SubnetIDs) > 0 && len(p.SecurityGroupIDs) == 0:
		bad("securityGroupIds: needed with subnetIds (one allowing 443 to the cluster security group)")
	case len(p.SecurityGroupIDs) > 0 && len(p.SubnetIDs) == 0:
		bad("subnetIds: needed with securityGroupIds")
	}
	errs = append(errs, p.checkConcurrency()...)
	if p.MaxEventAge != 0 && (p.MaxEventAge < time.Minute || p.MaxEventAge > maxEventAge || p.MaxEventAge%time.Second != 0) {
		bad("maxEventAgeSeconds: %v is not 0 or a whole number of seconds in 60–86400", p.MaxEventAge.Seconds())
	}
	switch {
	case p.WebhookKMSKeyARN != "" && p.WebhookSecretARN == "":
		bad("webhookKmsKeyArn: needs webhookSecretArn")
	case p.WebhookKMSKeyARN != "" && !kmsKeyARN.MatchString(p.WebhookKMSKeyARN):
		bad("webhookKmsKeyArn: %q is not a KMS key ARN (arn:…:kms:REGION:ACCOUNT:key/ID; not an alias)", p.WebhookKMSKeyARN)
	}
	return errs
}

// checkConcurrency holds the reservation between what the event source
// needs and what Lambda lets an account reserve: it always keeps 100
// executions of the account's limit unreserved (PutFunctionConcurrency
// fails the deploy otherwise). The limit is Lambda's default quota, 1000,
// unless accountConcurrencyLimit says it was raised (or is lower, as in
// some new accounts). Other functions' reservations count against the
// same 900 and cannot be seen at synth.
func (p Props) checkConcurrency() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if p.AccountConcurrency < 1 {
		bad("accountConcurrencyLimit: %d is not a positive number of concurrent executions", p.AccountConcurrency)
		return errs
	}
	sources, keys := p.sourceConcurrency()
	switch {
	case p.ReservedConcurrency < -1:
		bad("reservedConcurrency: %d is not -1 (none), 0 (%s) or a reservation", p.ReservedConcurrency, keys)
	case p.ReservedConcurrency > 0 && p.ReservedConcurrency < sources:
		bad("reservedConcurrency: %d is below %s (%d): it would throttle the event sources", p.ReservedConcurrency, keys, sources)
	}
	if r := p.reserved(); r != nil && int(*r) > p.AccountConcurrency-unreservedMin {
		what := fmt.Sprintf("reserving %d", int(*r))
		if p.ReservedConcurrency == 0 {
			what += fmt.Sprintf(" (%s, reservedConcurrency being unset)", keys)
		}
		bad("reservedConcurrency: %s would leave fewer than the %d executions Lambda keeps unreserved of the account's limit "+
			"of %d (accountConcurrencyLimit; Lambda's default quota is %d): reserve at most %d, set accountConcurrencyLimit "+
			"to a raised quota, or -1 to reserve none", what, unreservedMin, p.AccountConcurrency, defaultAccountConcurrency,
			max(p.AccountConcurrency-unreservedMin, 0))
	}
	return errs
}

// reserved is the function's reserved concurrency, nil for none (-1: an
// account whose concurrency limit is too low to reserve any).
func (p Props) reserved() *float64 {
	switch {
	case p.ReservedConcurrency < 0:
		return nil
	case p.ReservedConcurrency == 0:
		n, _ := p.sourceConcurrency()
		return jsii.Number(float64(n))
	}
	return jsii.Number(float64(p.ReservedConcurrency))
}

// sourceConcurrency is the most invocations the event sources run at
// once, and what it is made of, in context keys: a reservation below it
// would throttle them, and cordons would take drains' executions.
func (p Props) sourceConcurrency() (int, string) {
	if c := p.cordonConcurrency(); c > 0 {
		return p.MaxConcurrency + c, "maxConcurrency + cordonConcurrency"
	}
	return p.MaxConcurrency, "maxConcurrency"
}

// targetMaxEventAge is how long EventBridge keeps trying to deliver an
// event: as long as the function would still act on it.
func (p Props) targetMaxEventAge() time.Duration {
	if p.MaxEventAge == 0 {
		return maxEventAge
	}
	return p.MaxEventAge
}

// accept is DRAINPIPE_ACCEPT: exactly the message shapes the stack wires.
func (p Props) accept() string {
	shapes := []string{"eventbridge"}
	if p.ASGNotificationRole {
		shapes = append(shapes, "asg-direct")
	}
	if len(p.SNSTopicARNs) > 0 {
		shapes = append(shapes, "sns")
	}
	return strings.Join(shapes, ",")
}

// arnRegion is the region field of an ARN.
func arnRegion(arn string) string {
	parts := strings.SplitN(arn, ":", 5)
	if len(parts) < 5 {
		return ""
	}
	return parts[3]
}
