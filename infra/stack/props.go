package stack

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"

	"github.com/drainpipe/drainpipe/internal/config"
)

// Props configures the stack. FromContext fills it from CDK context;
// Defaults gives the values used for anything the context leaves out.
type Props struct {
	// AssetDir holds the Makefile-built `bootstrap` (dist/ by default).
	AssetDir string
	// Clusters are the EKS clusters whose nodes Drainpipe drains.
	Clusters []string
	// AWSAuthClusters are the Clusters still on the aws-auth ConfigMap: no
	// access entry is created for them (see the README).
	AWSAuthClusters []string
	// MaxClusters, for the standalone template only (NewStandalone; the
	// maxClusters context key with standalone=true): its Clusters parameter
	// takes 1 to MaxClusters names instead of exactly len(Clusters), with
	// an access entry for each name given. 0: exactly len(Clusters).
	MaxClusters int
	// ASGNames and ASGNamePrefix select the Auto Scaling groups whose
	// terminate lifecycle actions are handled. Both empty: none are.
	ASGNames      []string
	ASGNamePrefix string
	// LifecycleHookNames are the hooks of those groups the function owns
	// (see hooknames.go); other tools' hooks are left alone.
	LifecycleHookNames []string
	// Actions per kind; an empty field leaves the function's default.
	Actions Actions
	DryRun  bool
	// RequiredTag is "key" or "key=value"; empty means every instance.
	RequiredTag string
	// Env holds extra DRAINPIPE_* variables passed through to the function.
	Env map[string]string

	MemoryMB        int
	Timeout         time.Duration
	BatchSize       int
	BatchWindow     time.Duration
	MaxConcurrency  int
	MaxReceiveCount int
	// CordonConcurrency is the cordon queue's event source maximum
	// concurrency (cordon.go): 0 is 20; negative, no cordon queue.
	CordonConcurrency int
	// RetryDelay is how soon a retried message comes back after its first
	// delivery (doubling per delivery, at most maxRetryDelay) instead of
	// the visibility timeout; 0 leaves it to the visibility timeout.
	RetryDelay   time.Duration
	LogRetention int // days; one of CloudWatch Logs' allowed values

	// AlarmOldestMessageAge is how long messages may wait in the queue
	// unreceived (visible: held and retried records are in flight, and do
	// not count) before OldestMessageAlarm fires; whole minutes, rounded up.
	AlarmOldestMessageAge time.Duration
	// AlarmDrainBlocked is how long a drain may stay blocked by disruption
	// budgets, over its runs, before DrainBlockedAlarm fires.
	AlarmDrainBlocked time.Duration
	AlarmErrors       int    // function errors in 5 minutes that raise the alarm
	AlarmTopicARN     string // optional SNS topic for alarm and OK actions
	// AlarmEmail is subscribed to the topic created when AlarmTopicARN
	// is empty.
	AlarmEmail string

	// WebhookSecretARN names a Secrets Manager secret or SSM parameter
	// holding a webhook URL notified of every interruption handled; the
	// function may read that one secret and nothing else.
	WebhookSecretARN string

	// ASGNotificationRole creates a role Auto Scaling can assume to send
	// lifecycle notifications straight to the queue.
	ASGNotificationRole bool

	// SenderRoleARNs are roles besides the stack's own senders allowed to
	// send to the queues (a dead-letter redrive); everyone else is denied.
	SenderRoleARNs []string
	// SNSTopicARNs are SNS topics the queue subscribes to: their
	// notifications are the function's `sns` shape. Whoever may publish to
	// them can feed the function.
	SNSTopicARNs []string
	// OperatorRoleARNs may, besides the function, receive, delete, purge
	// and hide messages on both queues (everyone else is denied), and
	// redrive the dead-letter queue into the queue.
	OperatorRoleARNs []string
	// QueueAdminARNs may, besides the account's root user and the stack's
	// deployer, change the queues' attributes, permissions and tags, and
	// delete them; everyone else is denied.
	QueueAdminARNs []string
	// DeployerRoleARN names the role that deploys the stack: it alone is
	// then the deployer the queue-control deny exempts, instead of CDK's
	// bootstrap execution role (shared by every stack of the account) or,
	// for the standalone template, CloudFormation acting for any caller.
	DeployerRoleARN string
	// SubnetIDs and SecurityGroupIDs place the function in a VPC (both or
	// neither), for clusters whose API endpoint is private.
	SubnetIDs        []string
	SecurityGroupIDs []string
	// ReservedConcurrency reserves the function's concurrency; 0 reserves
	// MaxConcurrency plus the cordon queue's, -1 nothing.
	ReservedConcurrency int
	// AccountConcurrency is the account's concurrent executions limit in
	// the region (Lambda's default quota, 1000, unless raised): Lambda
	// keeps 100 of it unreserved, so at most this minus 100 is reserved.
	AccountConcurrency int
	// MaxEventAge is DRAINPIPE_MAX_EVENT_AGE and the rules' target
	// maximum event age (0: off in the function, 24 h in EventBridge).
	MaxEventAge time.Duration
	// WebhookKMSKeyARN is the customer managed key of the webhook secret.
	WebhookKMSKeyARN string
	// SweepInterval is the minutes between sweeps (docs/sweep.md); 0: no
	// sweep rule, and the function ignores every Scheduled Event.
	SweepInterval int

	// CodeSigningConfigARN is a Lambda code signing configuration the
	// function's code must satisfy (signed with AWS Signer); empty: none.
	CodeSigningConfigARN string

	// Code is the function's code; nil: the bootstrap in AssetDir.
	Code awslambda.Code
	// StackNamedQueue names the queue after the deployed stack
	// (AWS::StackName) rather than the synthesized one: a standalone
	// template is deployed under names chosen later.
	StackNamedQueue bool
}

// Limits the stack derives from Props.
const (
	visibilityFactor = 6                   // AWS: queue visibility ≥ 6 × function timeout
	queueRetention   = 4 * 24 * time.Hour  // main queue
	dlqRetention     = 14 * 24 * time.Hour // SQS maximum; a DLQ keeps the original enqueue time
	accessGroup      = "drainpipe"         // Kubernetes group bound by deploy/rbac.yaml
	// maxRetryDelay caps DRAINPIPE_RETRY_DELAY and its backoff (the
	// function's config.MaxRetryDelay).
	maxRetryDelay = 5 * time.Minute
	// defaultAccountConcurrency is Lambda's default concurrent executions
	// quota per account and region; unreservedMin is what Lambda always
	// keeps unreserved of it (PutFunctionConcurrency refuses to go below).
	defaultAccountConcurrency = 1000
	unreservedMin             = 100
	// maxAlarmWindow is the longest an alarm may look back: CloudWatch
	// caps evaluation periods × period at a day.
	maxAlarmWindow = 24 * time.Hour
	// maxSweepInterval is a day, in minutes: a sweep rarer than that
	// leaves a lost notice's node out of service for too long to matter.
	maxSweepInterval = 1440
)

// Defaults returns the props used where the context is silent.
func Defaults() Props {
	return Props{
		AssetDir:              "dist",
		MemoryMB:              256,
		Timeout:               5 * time.Minute,
		BatchSize:             10,
		MaxConcurrency:        10,
		CordonConcurrency:     defaultCordonConcurrency,
		MaxReceiveCount:       5,
		RetryDelay:            15 * time.Second,
		LogRetention:          30,
		AlarmOldestMessageAge: 10 * time.Minute,
		AlarmDrainBlocked:     15 * time.Minute,
		AlarmErrors:           1,
		AccountConcurrency:    defaultAccountConcurrency,
		MaxEventAge:           time.Hour,
		SweepInterval:         5,
		LifecycleHookNames:    defaultHookNames(),
	}
}

// Visibility is the queue's visibility timeout for these props.
func (p Props) Visibility() time.Duration { return visibilityFactor * p.Timeout }

// attemptWindow is the longest time from one delivery to the next: the
// visibility timeout, or with hastened redelivery the function's run plus
// the longest backoff, if that is longer (hastening may fail, and the
// visibility timeout applies then).
func (p Props) attemptWindow() time.Duration {
	if p.RetryDelay <= 0 {
		return p.Visibility()
	}
	return max(p.Visibility(), p.Timeout+maxRetryDelay)
}

var (
	clusterName  = regexp.MustCompile(`^[0-9A-Za-z][A-Za-z0-9_-]{0,99}$`)
	envName      = regexp.MustCompile(`^DRAINPIPE_[A-Z0-9_]+$`)
	tagKey       = regexp.MustCompile(`^[\p{L}\p{Z}\p{N}_.:/=+\-@]{1,128}$`)
	secretARN    = regexp.MustCompile(`^arn:aws[a-z-]*:(secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:[A-Za-z0-9/_+=.@-]+|ssm:[a-z0-9-]+:[0-9]{12}:parameter/[A-Za-z0-9/_.-]+)$`)
	topicARN     = regexp.MustCompile(`^arn:aws[a-z-]*:sns:[a-z0-9-]+:[0-9]{12}:[A-Za-z0-9_-]{1,256}(\.fifo)?$`)
	emailAddress = regexp.MustCompile(`^[^@\s]+@[^@\s]+\.[^@\s]+$`)
	actionNames  = []string{"none", "cordon", "cordon-and-drain"}
	retentions   = []int{1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653}
)

// reservedEnv reports whether the stack sets k from a dedicated prop.
func reservedEnv(k string) bool {
	switch k {
	case "DRAINPIPE_CLUSTERS", "DRAINPIPE_DRY_RUN", "DRAINPIPE_MAX_RECEIVE_COUNT", "DRAINPIPE_MAX_CONCURRENCY", "DRAINPIPE_REQUIRED_TAG",
		"DRAINPIPE_WEBHOOK_SECRET_ARN", "DRAINPIPE_RETRY_DELAY", "DRAINPIPE_MAX_EVENT_AGE", "DRAINPIPE_ACCEPT",
		"DRAINPIPE_ASG_NAMES", "DRAINPIPE_ASG_NAME_PREFIX", "DRAINPIPE_LIFECYCLE_HOOK_NAMES", "DRAINPIPE_SWEEP_RULE",
		"DRAINPIPE_METRICS_STACK", "DRAINPIPE_SNS_TOPICS", "DRAINPIPE_CORDON_QUEUE_ARN":
		return true
	}
	return slices.ContainsFunc(Actions{}.fields(), func(f actionField) bool { return f.env == k })
}

// managedEnv is the function environment derived from the props' own
// fields. Unset actions and tag are left out so the function's defaults
// apply (internal/config is their single source).
func (p Props) managedEnv() map[string]string {
	env := map[string]string{
		"DRAINPIPE_CLUSTERS":          strings.Join(p.Clusters, ","),
		"DRAINPIPE_DRY_RUN":           fmt.Sprint(p.DryRun),
		"DRAINPIPE_MAX_RECEIVE_COUNT": fmt.Sprint(p.MaxReceiveCount),
		// How many instances share the cluster's eviction rate.
		"DRAINPIPE_MAX_CONCURRENCY": fmt.Sprint(p.MaxConcurrency),
		"DRAINPIPE_RETRY_DELAY":     fmt.Sprintf("%ds", int(p.RetryDelay/time.Second)),
	}
	for _, f := range p.Actions.fields() {
		if f.value != "" {
			env[f.env] = f.value
		}
	}
	if p.RequiredTag != "" {
		env["DRAINPIPE_REQUIRED_TAG"] = p.RequiredTag
	}
	if p.WebhookSecretARN != "" {
		env["DRAINPIPE_WEBHOOK_SECRET_ARN"] = p.WebhookSecretARN
	}
	env["DRAINPIPE_MAX_EVENT_AGE"] = fmt.Sprintf("%ds", int(p.MaxEventAge/time.Second))
	env["DRAINPIPE_ACCEPT"] = p.accept()
	if len(p.SNSTopicARNs) > 0 {
		env["DRAINPIPE_SNS_TOPICS"] = strings.Join(p.SNSTopicARNs, ",")
	}
	p.groupEnv(env)
	return env
}

// environment is the function's full environment: the runtime's
// settings, the props' and the operator's own, which win.
func (p Props) environment() map[string]string {
	env := p.managedEnv()
	for k, v := range config.RuntimeEnv() {
		env[k] = v
	}
	for k, v := range p.Env {
		env[k] = v
	}
	return env
}
