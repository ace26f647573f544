package pipeline

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/smithy-go"

	"github.com/drainpipe/drainpipe/internal/awserr"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/policy"
)

// The AWS error classes decide ignore versus retry: access denied (a
// missing IAM permission) and an unknown cluster are misconfigurations,
// retried into the dead-letter queue with an ERROR line; throttling is
// retried quietly; an instance EC2 does not know is ignored.
func TestAWSErrorClassesDecide(t *testing.T) {
	api := func(code string) error {
		return fmt.Errorf("describing 1 instances: %w", awserr.Classify(&smithy.GenericAPIError{Code: code, Message: code}))
	}
	const loud = `"level":"ERROR"`
	for _, tc := range []struct {
		name       string
		opts       rigOpts
		wantStatus handler.Status
		wantReason string
		wantLoud   bool
	}{
		{"lookup denied", rigOpts{describeErr: api("UnauthorizedOperation")}, handler.StatusRetry, "looking up instance", true},
		{"lookup throttled", rigOpts{describeErr: api("RequestLimitExceeded")}, handler.StatusRetry, "looking up instance", false},
		{"lookup not found", rigOpts{describeErr: api("InvalidInstanceID.NotFound")}, handler.StatusIgnored, "instance not found in EC2", false},
		{"cluster denied", rigOpts{clusterErr: api("AccessDeniedException")}, handler.StatusRetry, "connecting to cluster", true},
		{"cluster unknown to EKS", rigOpts{clusterErr: api("ResourceNotFoundException")}, handler.StatusRetry, "connecting to cluster", true},
		{"cluster throttled", rigOpts{clusterErr: api("ThrottlingException")}, handler.StatusRetry, "connecting to cluster", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, tc.opts)
			got := r.actor.Act(context.Background(), task(policy.ActionCordonAndDrain, 1, spot(t0)))
			if got.Status != tc.wantStatus || !strings.Contains(got.Reason, tc.wantReason) {
				t.Errorf("Act = {%s %q}, want %s containing %q", statusName(got.Status), got.Reason, statusName(tc.wantStatus), tc.wantReason)
			}
			if l := strings.Contains(r.logs.String(), loud); l != tc.wantLoud {
				t.Errorf("ERROR line logged = %v, want %v:\n%s", l, tc.wantLoud, r.logs)
			}
		})
	}
}
