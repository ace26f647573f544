package stack

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/drainpipe/drainpipe/internal/event"
)

// ContextKeys lists every CDK context key FromContext reads, for docs and
// for catching typos in cdk.json.
var ContextKeys = slices.Concat([]string{
	"assetDir", "clusters", "awsAuthClusters", "asgNames", "asgNamePrefix"}, actionKeys(), []string{"lifecycleHookNames",
	"dryRun", "requiredTag", "env", "memorySize", "timeoutSeconds", "batchSize", "batchWindowSeconds",
	"maxConcurrency", "cordonConcurrency", "maxReceiveCount", "retryDelaySeconds", "logRetentionDays", "alarmOldestMessageAgeSeconds",
	"alarmErrors", "alarmTopicArn", "alarmEmail", "asgNotificationRole", "webhookSecretArn",
	"senderRoleArns", "operatorRoleArns", "subnetIds", "securityGroupIds", "reservedConcurrency", "maxEventAgeSeconds", "webhookKmsKeyArn",
	"sweepInterval", "alarmDrainBlockedSeconds", "accountConcurrencyLimit",
	"snsTopicArns", "queueAdminArns", "codeSigningConfigArn",
})

// actionKeys are the kinds' action context keys, from the kinds table.
func actionKeys() []string {
	var keys []string
	for _, f := range (Actions{}).fields() {
		keys = append(keys, f.key)
	}
	return keys
}

// FromContext builds Props from CDK context. get returns a key's value or
// nil: values from cdk.json arrive as JSON types, values from `-c key=value`
// as strings, so each reader accepts both. The result is not validated.
func FromContext(get func(key string) any) (Props, error) {
	p := Defaults()
	r := reader{get: get}
	r.str("assetDir", &p.AssetDir)
	r.list("clusters", &p.Clusters)
	r.list("awsAuthClusters", &p.AWSAuthClusters)
	r.list("asgNames", &p.ASGNames)
	r.str("asgNamePrefix", &p.ASGNamePrefix)
	for _, k := range event.Kinds() {
		if dst := p.Actions.field(k); dst != nil {
			info, _ := event.Info(k)
			r.str(info.ContextKey, dst)
		}
	}
	r.list("lifecycleHookNames", &p.LifecycleHookNames)
	r.boolean("dryRun", &p.DryRun)
	r.str("requiredTag", &p.RequiredTag)
	r.object("env", &p.Env)
	r.integer("memorySize", &p.MemoryMB)
	r.seconds("timeoutSeconds", &p.Timeout)
	r.integer("batchSize", &p.BatchSize)
	r.seconds("batchWindowSeconds", &p.BatchWindow)
	r.integer("maxConcurrency", &p.MaxConcurrency)
	r.integer("cordonConcurrency", &p.CordonConcurrency)
	r.integer("maxReceiveCount", &p.MaxReceiveCount)
	r.seconds("retryDelaySeconds", &p.RetryDelay)
	r.integer("logRetentionDays", &p.LogRetention)
	r.seconds("alarmOldestMessageAgeSeconds", &p.AlarmOldestMessageAge)
	r.integer("alarmErrors", &p.AlarmErrors)
	r.str("alarmTopicArn", &p.AlarmTopicARN)
	r.str("alarmEmail", &p.AlarmEmail)
	r.boolean("asgNotificationRole", &p.ASGNotificationRole)
	r.str("webhookSecretArn", &p.WebhookSecretARN)
	r.list("senderRoleArns", &p.SenderRoleARNs)
	r.list("operatorRoleArns", &p.OperatorRoleARNs)
	r.list("snsTopicArns", &p.SNSTopicARNs)
	r.list("queueAdminArns", &p.QueueAdminARNs)
	r.str("deployerRoleArn", &p.DeployerRoleARN)
	r.str("codeSigningConfigArn", &p.CodeSigningConfigARN)
	r.list("subnetIds", &p.SubnetIDs)
	r.list("securityGroupIds", &p.SecurityGroupIDs)
	r.integer("reservedConcurrency", &p.ReservedConcurrency)
	r.seconds("maxEventAgeSeconds", &p.MaxEventAge)
	r.str("webhookKmsKeyArn", &p.WebhookKMSKeyARN)
	r.integer("sweepInterval", &p.SweepInterval)
	r.seconds("alarmDrainBlockedSeconds", &p.AlarmDrainBlocked)
	r.integer("accountConcurrencyLimit", &p.AccountConcurrency)
	return p, errors.Join(r.errs...)
}

// reader decodes context values, collecting errors rather than stopping at
// the first.
type reader struct {
	get  func(string) any
	errs []error
}

func (r *reader) fail(key string, v any, want string) {
	r.errs = append(r.errs, fmt.Errorf("context %s: %v is not %s", key, v, want))
}

func (r *reader) str(key string, dst *string) {
	switch v := r.get(key).(type) {
	case nil:
	case string:
		*dst = strings.TrimSpace(v)
	default:
		r.fail(key, v, "a string")
	}
}

// list accepts a JSON array of strings or a comma-separated string.
func (r *reader) list(key string, dst *[]string) {
	var out []string
	switch v := r.get(key).(type) {
	case nil:
		return
	case string:
		if strings.HasPrefix(strings.TrimSpace(v), "[") {
			if err := json.Unmarshal([]byte(v), &out); err != nil {
				r.fail(key, v, "a JSON array of strings")
				return
			}
			break
		}
		out = strings.Split(v, ",")
	case []any:
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				r.fail(key, v, "a list of strings")
				return
			}
			out = append(out, s)
		}
	default:
		r.fail(key, v, "a list of strings")
		return
	}
	*dst = (*dst)[:0]
	for _, s := range out {
		if s = strings.TrimSpace(s); s != "" {
			*dst = append(*dst, s)
		}
	}
}

func (r *reader) boolean(key string, dst *bool) {
	switch v := r.get(key).(type) {
	case nil:
	case bool:
		*dst = v
	case string:
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			r.fail(key, v, "true or false")
			return
		}
		*dst = b
	default:
		r.fail(key, v, "true or false")
	}
}

// integer reports whether it set dst.
func (r *reader) integer(key string, dst *int) bool {
	switch v := r.get(key).(type) {
	case nil:
	case float64:
		if v != float64(int(v)) {
			r.fail(key, v, "a whole number")
			return false
		}
		*dst = int(v)
		return true
	case string:
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			r.fail(key, v, "a whole number")
			return false
		}
		*dst = n
		return true
	default:
		r.fail(key, v, "a whole number")
	}
	return false
}

func (r *reader) seconds(key string, dst *time.Duration) {
	var n int
	if r.integer(key, &n) {
		*dst = time.Duration(n) * time.Second
	}
}

// object accepts a JSON object of strings, inline or as a string.
func (r *reader) object(key string, dst *map[string]string) {
	v := r.get(key)
	if v == nil {
		return
	}
	raw, ok := v.(string)
	if !ok {
		b, err := json.Marshal(v)
		if err != nil {
			r.fail(key, v, "an object of strings")
			return
		}
		raw = string(b)
	}
	var m map[string]string
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		r.fail(key, v, "an object of strings")
		return
	}
	*dst = m
}
