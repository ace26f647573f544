package live

import (
	"context"
	"testing"
	"time"

	"github.com/aws/smithy-go"
)

// A throttled AWS call backs off briefly: the SDK's default of up to 20 s a
// retry let six attempts outlast a whole invocation's budget while a spot
// wave throttled EC2 and Auto Scaling, and hooks went without heartbeats.
// The pipeline's own redelivery backs off longer.
func TestAWSRetriesBackOffBriefly(t *testing.T) {
	t.Setenv("AWS_REGION", "us-west-2")
	cfg, err := AWSConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Retryer == nil {
		t.Fatal("no retryer configured: each client takes the SDK's default, backing off up to 20 s")
	}
	r := cfg.Retryer()
	if got := r.MaxAttempts(); got != awsRetryAttempts {
		t.Errorf("max attempts %d, want %d", got, awsRetryAttempts)
	}
	throttled := &smithy.GenericAPIError{Code: "RequestLimitExceeded", Message: "Request limit exceeded."}
	var total time.Duration
	for attempt := 1; attempt < awsRetryAttempts; attempt++ {
		for range 50 { // jittered: take the worst of many draws
			d, err := r.RetryDelay(attempt, throttled)
			if err != nil {
				t.Fatalf("attempt %d: %v", attempt, err)
			}
			if d > awsMaxBackoff {
				t.Fatalf("attempt %d: delay %v, want at most %v", attempt, d, awsMaxBackoff)
			}
		}
		total += awsMaxBackoff
	}
	if total > 10*time.Second {
		t.Errorf("worst case %v of backoff for one call, want under 10 s", total)
	}
}
