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
	if p.ReservedConcurrency > 0 && (p.ReservedConcurrency < p.MaxConcurrency || p.ReservedConcurrency > 1000) ||
		p.ReservedConcurrency < -1 {
		bad("reservedConcurrency: %d is not -1 (none) or maxConcurrency (%d)–1000: less would throttle the event source", p.ReservedConcurrency, p.MaxConcurrency)
	}
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

// reserved is the function's reserved concurrency, nil for none (-1: an
// account whose concurrency limit is too low to reserve any).
func (p Props) reserved() *float64 {
	switch {
	case p.ReservedConcurrency < 0:
		return nil
	case p.ReservedConcurrency == 0:
		return jsii.Number(float64(p.MaxConcurrency))
	}
	return jsii.Number(float64(p.ReservedConcurrency))
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
