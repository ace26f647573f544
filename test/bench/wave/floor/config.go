package floor

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
)

// The floor's AWS retries are Drainpipe's (internal/live: six attempts,
// each wait capped at 2 s; TestFloorRetriesAreDrainpipes holds them
// equal). At the SDK's default cap of 20 s one throttled lookup would
// hold the floor's cordons ten times longer than Drainpipe's, and the
// cordon ratio would flatter Drainpipe.
const (
	RetryAttempts = 6
	MaxBackoff    = 2 * time.Second
)

// AWSConfig is the SDK's default configuration from the environment with
// Drainpipe's retry settings.
func AWSConfig(ctx context.Context) (aws.Config, error) {
	cfg, err := config.LoadDefaultConfig(ctx, config.WithRetryer(func() aws.Retryer {
		return retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts, o.MaxBackoff = RetryAttempts, MaxBackoff
		})
	}))
	if err != nil {
		return aws.Config{}, fmt.Errorf("loading the AWS configuration: %w", err)
	}
	return cfg, nil
}
