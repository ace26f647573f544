package stack

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Validate reports every problem with p at once, so a user fixes their
// context in one round.
func (p Props) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	if p.Code == nil {
		if err := checkAsset(p.AssetDir); err != nil {
			errs = append(errs, err)
		}
	}
	if len(p.Clusters) == 0 {
		bad("clusters: at least one EKS cluster name is needed")
	}
	for _, c := range p.Clusters {
		if !clusterName.MatchString(c) {
			bad("clusters: %q is not a valid EKS cluster name", c)
		}
	}
	for _, c := range p.AWSAuthClusters {
		if !slices.Contains(p.Clusters, c) {
			bad("awsAuthClusters: %q is not one of clusters", c)
		}
	}
	for _, n := range p.ASGNames {
		if err := checkGroupName(n); err != nil {
			bad("asgNames: %w", err)
		}
	}
	if p.ASGNamePrefix != "" {
		if err := checkGroupName(p.ASGNamePrefix); err != nil {
			bad("asgNamePrefix: %w", err)
		}
	}
	for _, n := range p.LifecycleHookNames {
		if !hookName.MatchString(n) {
			bad("lifecycleHookNames: %q is not a valid lifecycle hook name", n)
		}
	}
	for _, f := range p.Actions.fields() {
		if f.value != "" && !slices.Contains(actionNames, f.value) {
			bad("%s: %q is not one of %s", f.key, f.value, strings.Join(actionNames, ", "))
		}
	}
	if p.RequiredTag != "" {
		key, _, _ := strings.Cut(p.RequiredTag, "=")
		if !tagKey.MatchString(key) || strings.HasPrefix(key, "aws:") {
			bad("requiredTag: %q is not key or key=value with a valid tag key", p.RequiredTag)
		}
	}
	for k := range p.Env {
		switch {
		case !envName.MatchString(k):
			bad("env: %q is not a DRAINPIPE_ variable name", k)
		case k == "DRAINPIPE_KUBECONFIG":
			bad("env: %s switches the function to local mode", k)
		case reservedEnv(k):
			bad("env: %s is set by the stack from its own context key", k)
		}
	}
	if p.MemoryMB < 128 || p.MemoryMB > 10240 {
		bad("memorySize: %d MB is outside 128–10240", p.MemoryMB)
	}
	if p.Timeout < 10*time.Second || p.Timeout > 15*time.Minute || p.Timeout%time.Second != 0 {
		bad("timeoutSeconds: %v is not a whole number of seconds in 10–900", p.Timeout.Seconds())
	}
	if err := p.checkReserves(); err != nil {
		errs = append(errs, err)
	}
	if p.BatchSize < 1 || p.BatchSize > 10000 {
		bad("batchSize: %d is outside 1–10000", p.BatchSize)
	}
	if p.BatchWindow < 0 || p.BatchWindow > 5*time.Minute || p.BatchWindow%time.Second != 0 {
		bad("batchWindowSeconds: %v is not a whole number of seconds in 0–300", p.BatchWindow.Seconds())
	}
	if p.BatchSize > 10 && p.BatchWindow < time.Second {
		bad("batchSize: more than 10 needs batchWindowSeconds of at least 1 (an SQS event source rule)")
	}
	if p.MaxConcurrency < 2 || p.MaxConcurrency > 1000 {
		bad("maxConcurrency: %d is outside 2–1000", p.MaxConcurrency)
	}
	if c := p.cordonConcurrency(); c != 0 && (c < 2 || c > 1000) {
		bad("cordonConcurrency: %d is outside 2–1000 (0: %d; -1: no cordon queue)", c, defaultCordonConcurrency)
	}
	if p.MaxReceiveCount < 1 || p.MaxReceiveCount > 1000 {
		bad("maxReceiveCount: %d is outside 1–1000", p.MaxReceiveCount)
	}
	if p.RetryDelay < 0 || p.RetryDelay > maxRetryDelay || p.RetryDelay%time.Second != 0 {
		bad("retryDelaySeconds: %v is not a whole number of seconds in 0–%v", p.RetryDelay.Seconds(), maxRetryDelay.Seconds())
	}
	// Every attempt must fit in the retention, or a message being resumed
	// by redelivery expires before its final attempt completes the hook.
	if p.Timeout > 0 && time.Duration(p.MaxReceiveCount)*p.attemptWindow() > queueRetention {
		bad("maxReceiveCount × the longest time between deliveries (%d × %vs) exceeds the queue retention of %v days",
			p.MaxReceiveCount, p.attemptWindow().Seconds(), queueRetention.Hours()/24)
	}
	if !slices.Contains(retentions, p.LogRetention) {
		bad("logRetentionDays: %d is not one of %v", p.LogRetention, retentions)
	}
	if p.SweepInterval < 0 || p.SweepInterval > maxSweepInterval {
		bad("sweepInterval: %d is not a whole number of minutes in 0–%d", p.SweepInterval, maxSweepInterval)
	}
	if p.AlarmOldestMessageAge < time.Minute || p.AlarmOldestMessageAge > maxAlarmWindow || p.AlarmOldestMessageAge%time.Second != 0 {
		bad("alarmOldestMessageAgeSeconds: %v is not a whole number of seconds in 60–86400", p.AlarmOldestMessageAge.Seconds())
	}
	if p.AlarmDrainBlocked < time.Minute || p.AlarmDrainBlocked%time.Second != 0 {
		bad("alarmDrainBlockedSeconds: %v is not a whole number of seconds ≥ 60", p.AlarmDrainBlocked.Seconds())
	}
	if p.AlarmErrors < 1 {
		bad("alarmErrors: %d is below 1", p.AlarmErrors)
	}
	if p.AlarmTopicARN != "" && !topicARN.MatchString(p.AlarmTopicARN) {
		bad("alarmTopicArn: %q is not an SNS topic ARN", p.AlarmTopicARN)
	}
	if p.AlarmEmail != "" && (p.AlarmTopicARN != "" || !emailAddress.MatchString(p.AlarmEmail)) {
		bad("alarmEmail: %q is not an email address, or alarmTopicArn is set too (subscribe to that topic instead)", p.AlarmEmail)
	}
	if p.WebhookSecretARN != "" && !secretARN.MatchString(p.WebhookSecretARN) {
		bad("webhookSecretArn: %q is not the ARN of a Secrets Manager secret or an SSM parameter", p.WebhookSecretARN)
	}
	p.validateCodeSigning(bad)
	errs = append(errs, p.validateTrust()...)
	errs = append(errs, p.checkEnv()...)
	return errors.Join(errs...)
}

// checkGroupName rejects names that would widen the IAM resource or the
// event pattern: a '*' or '?' in an ARN is a wildcard.
func checkGroupName(n string) error {
	if n == "" || len(n) > 255 || strings.ContainsAny(n, "*?:\"") {
		return fmt.Errorf("%q is not a valid Auto Scaling group name (1–255 characters, no * ? : \")", n)
	}
	return nil
}

// checkAsset makes synth fail early and clearly when `make build` has not run.
func checkAsset(dir string) error {
	path := filepath.Join(dir, "bootstrap")
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return fmt.Errorf("finding the Lambda asset: %w (run `make build` first, or set -c assetDir=DIR)", err)
	case !fi.Mode().IsRegular() || fi.Size() == 0:
		return fmt.Errorf("finding the Lambda asset: %s is not a non-empty file (run `make build`)", path)
	}
	return nil
}
