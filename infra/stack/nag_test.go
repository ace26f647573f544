package stack

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/aws-cdk-go/awscdk/v2/cxapi"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
)

// TestAwsSolutions runs cdk-nag's AwsSolutions pack on the widest
// configuration: no unsuppressed error or warning may remain, and every
// suppression carries its reason in stack code (nag.go's callers).
func TestAwsSolutions(t *testing.T) {
	p := testProps(t)
	p.ASGNotificationRole = true
	p.AlarmTopicARN = "arn:aws:sns:eu-west-1:123456789012:oncall"
	p.WebhookSecretARN = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:drainpipe/webhook"
	for _, f := range nagFindings(newStack(t, p)) {
		t.Error(f)
	}
}

// TestAwsSolutionsCatchesAnUnsafeQueue shows the check above can fail: a
// queue with neither TLS enforcement nor a dead-letter queue is reported.
func TestAwsSolutionsCatchesAnUnsafeQueue(t *testing.T) {
	s := newStack(t, testProps(t))
	awssqs.NewQueue(s, jsii.String("Unsafe"), &awssqs.QueueProps{})
	found := strings.Join(nagFindings(s), "\n")
	for _, rule := range []string{"AwsSolutions-SQS3", "AwsSolutions-SQS4"} {
		if !strings.Contains(found, rule+":") {
			t.Errorf("cdk-nag did not report %s on an unsafe queue; findings:\n%s", rule, found)
		}
	}
}

// nagFindings applies the AwsSolutions pack to s and returns its unsuppressed
// errors and warnings.
func nagFindings(s awscdk.Stack) []string {
	awscdk.Aspects_Of(s).Add(cdknag.NewAwsSolutionsChecks(&cdknag.NagPackProps{Verbose: jsii.Bool(true)}), nil)
	ann := assertions.Annotations_FromStack(s)
	nag := assertions.Match_StringLikeRegexp(jsii.String("AwsSolutions-.*"))
	var out []string
	for level, found := range map[string]*[]*cxapi.SynthesisMessage{
		"error":   ann.FindError(jsii.String("*"), nag),
		"warning": ann.FindWarning(jsii.String("*"), nag),
	} {
		for _, m := range *found {
			out = append(out, fmt.Sprintf("cdk-nag %s at %s: %s", level, *m.Id, firstLine(fmt.Sprint(m.Entry.Data))))
		}
	}
	return out
}

func firstLine(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }
