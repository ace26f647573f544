package event

import (
	"strings"
	"time"
)

// MaxFutureSkew is how far ahead of the clock an event's time may be: AWS
// stamps events when they happen, so anything later is forged (or a clock
// gone wrong) and could outlive every staleness check.
const MaxFutureSkew = 5 * time.Minute

// Origin is the partition, account and region the function runs in. Its
// zero value means unknown (local runs): nothing is compared then.
type Origin struct {
	Account, Region string
	// Partition (aws, aws-cn, aws-us-gov...): an account id is only
	// unique within one, so a topic of the same id in another partition is
	// another account's.
	Partition string
}

// OriginFromFunctionARN reads the account and region of a Lambda function
// ARN (arn:PARTITION:lambda:REGION:ACCOUNT:function:NAME[:QUALIFIER]).
func OriginFromFunctionARN(arn string) (Origin, error) {
	parts := strings.Split(arn, ":")
	if len(parts) < 7 || parts[0] != "arn" || parts[2] != "lambda" || parts[5] != "function" {
		return Origin{}, rejectf("malformed function ARN %q", clip(arn))
	}
	o := Origin{Region: parts[3], Account: parts[4], Partition: parts[1]}
	if err := checkAccount(o.Account); err != nil {
		return Origin{}, err
	}
	if err := checkRegion(o.Region); err != nil {
		return Origin{}, err
	}
	return o, nil
}

// CheckOrigin rejects an interruption from another account or region than
// the function's: only AWS services of this account and region feed the
// queue, so anything else was sent by hand. A notification Auto Scaling
// sends straight to SQS carries no region, only its account.
func CheckOrigin(in Interruption, o Origin) error {
	if o.Account != "" && in.Account != o.Account {
		return rejectf("event from account %q, not this function's account %s", clip(in.Account), o.Account)
	}
	if o.Region != "" && in.Region != "" && in.Region != o.Region {
		return rejectf("event from region %q, not this function's region %s", clip(in.Region), o.Region)
	}
	return nil
}

// CheckNotFuture rejects an interruption timed more than MaxFutureSkew
// after now.
func CheckNotFuture(in Interruption, now time.Time) error {
	if !in.Time.IsZero() && in.Time.Sub(now) > MaxFutureSkew {
		return rejectf("event time %s is in the future (now %s)", in.Time.Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	return nil
}
