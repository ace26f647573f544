// Package config reads Drainpipe's configuration from environment
// variables. It is the one place they are read: Load takes a getenv
// function so tests pass a map and nothing reads the environment at init.
package config

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/notify/webhook"
	"github.com/drainpipe/drainpipe/internal/policy"
)

// Config is Drainpipe's whole configuration.
type Config struct {
	// DryRun logs what would be done instead of doing it.
	DryRun bool
	// Policy is the action for each kind of interruption.
	Policy policy.Policy
	// Clusters are the EKS clusters whose nodes Drainpipe handles.
	Clusters []string
	// ClusterEndpoints overrides the API server URL of some clusters
	// (name → URL) instead of asking EKS for it.
	ClusterEndpoints map[string]string
	// ClusterCAs are the PEM CAs of https ClusterEndpoints (name → PEM), so
	// EKS is not asked for them.
	ClusterCAs map[string][]byte
	// RequiredTag, when its Key is set, limits Drainpipe to instances
	// carrying that tag (and value, when given).
	RequiredTag Tag
	// MaxReceiveCount is the queue's maxReceiveCount: the delivery after
	// which a retried message goes to the dead-letter queue.
	MaxReceiveCount int
	// RetryDelay is how long a retried message stays invisible after its
	// first delivery (doubling with each further delivery, up to
	// MaxRetryDelay) instead of the queue's visibility timeout; 0 leaves
	// redelivery to the queue.
	RetryDelay time.Duration
	// MaxEventAge is how long after its deadline (or its time, when it has
	// none) an interruption is still acted on; 0 means forever.
	MaxEventAge time.Duration
	// GiveWayAfter is how long a batch on its first delivery runs before
	// it hands its unfinished records back to messages waiting in the
	// queue (handler.GiveWay); 0 never.
	GiveWayAfter time.Duration
	// KubeQPS and KubeBurst rate-limit the Kubernetes client.
	KubeQPS   float32
	KubeBurst int
	// EvictionConcurrency caps evictions in flight per node.
	EvictionConcurrency int
	// RecordConcurrency caps instances handled at once per batch.
	RecordConcurrency int
	// ClusterEvictionRate is the eviction requests per second all function
	// instances together send a cluster (0: unpaced); MaxConcurrency, the
	// event source's maximum concurrency, is how many share it.
	ClusterEvictionRate int
	MaxConcurrency      int
	// TaintEffect is the effect of the taint put on interrupted nodes.
	TaintEffect string
	// ExcludeFromLB labels interrupted nodes so load balancers stop
	// sending them traffic before the drain.
	ExcludeFromLB bool
	// EvictUnmanaged evicts pods that no controller will recreate.
	EvictUnmanaged bool
	// DeadlineReserve is kept back from the function's deadline to report
	// the batch.
	DeadlineReserve time.Duration
	// SafetyMargin is kept back from an instance's deadline: the drain
	// gives up waiting this long before the instance goes.
	SafetyMargin time.Duration
	// DeadlineDelete deletes, shortly before a hard deadline, pods a
	// PodDisruptionBudget still blocks, so they get SIGTERM before the
	// instance goes.
	DeadlineDelete bool
	// StuckPodTimeout: a pod terminating this long past its grace is
	// reported stuck and no longer waited for.
	StuckPodTimeout time.Duration
	// Kubeconfig, when set, makes Drainpipe use that kubeconfig file
	// instead of EKS (local mode).
	Kubeconfig string
	// LogLevel is the lowest level logged.
	LogLevel slog.Level
	// WebhookSecretARN names the Secrets Manager secret or SSM parameter
	// holding a webhook URL to notify; empty sends no notification. The
	// URL itself is never put in the environment.
	WebhookSecretARN string
	// WebhookTemplate is a template over webhook.Data giving the
	// message's body (checked at load); empty sends {"text": ...}.
	WebhookTemplate string
	// WebhookHeaders are the webhook request's headers (checked at load;
	// Content-Type included).
	WebhookHeaders http.Header
	// SweepRule is the ARN (or name) of the EventBridge schedule rule whose
	// Scheduled Events run the sweep; empty ignores every scheduled event.
	SweepRule string
	// CordonQueueARN is the ARN of the cordon queue: its batches are
	// copies of the work queue's notices, acted on by a cordon and hold
	// alone; empty when there is none.
	CordonQueueARN string
	// KubeEvents records Kubernetes events on drained nodes and pods.
	KubeEvents bool
	// Metrics writes CloudWatch embedded-format metrics to stdout.
	Metrics bool
	// MetricsStack is the value of the `stack` dimension added to every
	// metric, so deployments sharing an account and region stay apart;
	// empty adds none.
	MetricsStack string
	// Accept lists the message shapes handled; the rest are rejected.
	// Empty accepts every shape.
	Accept event.Shapes
	// SNSTopics are the topics the queue subscribes to: notifications
	// through any other are rejected. Empty: any topic of the function's
	// account.
	SNSTopics []string
	// Hooks configures lifecycle hook keep-alive and completion.
	Hooks Hooks
	// Return says which nodes Drainpipe handles and gives back.
	Return Return
	// Drains says what drains tell the workloads.
	Drains Drains
	// Groups limits how many nodes of one group drain at once.
	Groups Groups
}

// Tag is an EC2 tag key with an optional value.
type Tag struct {
	Key   string
	Value string
	// AnyValue is true when only the key must be present.
	AnyValue bool
}

// Default is the configuration with no variable set.
func Default() Config {
	return Config{
		Policy:              policy.Default(),
		MaxReceiveCount:     5,
		RetryDelay:          15 * time.Second,
		MaxEventAge:         time.Hour,
		GiveWayAfter:        10 * time.Second,
		KubeQPS:             200,
		KubeBurst:           400,
		EvictionConcurrency: 50,
		RecordConcurrency:   10,
		ClusterEvictionRate: 200,
		MaxConcurrency:      10,
		TaintEffect:         "NoSchedule",
		ExcludeFromLB:       true,
		EvictUnmanaged:      true,
		DeadlineReserve:     10 * time.Second,
		SafetyMargin:        10 * time.Second,
		DeadlineDelete:      true,
		StuckPodTimeout:     time.Minute,
		LogLevel:            slog.LevelInfo,
		KubeEvents:          true,
		Metrics:             true,
		Hooks:               defaultHooks(),
		Return:              DefaultReturn(),
		Groups:              DefaultGroups(),
	}
}

// MaxRetryDelay is the longest RetryDelay, and the cap of its backoff
// (internal/redeliver.MaxDelay): a retried drain must come back often
// enough to heartbeat its lifecycle hook.
const MaxRetryDelay = 5 * time.Minute

// maxFunctionTimeout is Lambda's longest function timeout.
const maxFunctionTimeout = 15 * time.Minute

// Prefix starts every variable's name.
const Prefix = "DRAINPIPE_"

// Load reads the configuration through getenv (os.Getenv in production).
// Unset or empty variables keep their defaults. It reports every invalid
// variable at once.
func Load(getenv func(string) string) (Config, error) {
	c := Default()
	r := reader{getenv: getenv}
	r.boolean("DRY_RUN", &c.DryRun)
	c.Policy = policy.Policy{}
	for _, k := range event.Kinds() {
		a := policy.Default().For(k)
		if v := getenv(policy.Var(k)); v != "" {
			parsed, err := policy.ParseAction(v)
			r.check(policy.Var(k), err)
			if err == nil {
				a = parsed
			}
		}
		c.Policy[k] = a
	}
	r.parse("CLUSTERS", func(v string) (err error) { c.Clusters, err = parseClusters(v); return err })
	r.parse("CLUSTER_ENDPOINTS", func(v string) (err error) { c.ClusterEndpoints, err = parseEndpoints(v); return err })
	r.parse("CLUSTER_CAS", func(v string) (err error) { c.ClusterCAs, err = parseCAs(v); return err })
	r.parse("REQUIRED_TAG", func(v string) (err error) { c.RequiredTag, err = parseTag(v); return err })
	r.positiveInt("MAX_RECEIVE_COUNT", &c.MaxReceiveCount)
	r.parse("RETRY_DELAY", func(v string) (err error) { c.RetryDelay, err = parseRetryDelay(v); return err })
	r.duration("MAX_EVENT_AGE", &c.MaxEventAge)
	r.durationUpTo("GIVE_WAY_AFTER", "10s", maxFunctionTimeout, &c.GiveWayAfter)
	r.parse("KUBE_QPS", func(v string) (err error) { c.KubeQPS, err = parseQPS(v); return err })
	r.positiveInt("KUBE_BURST", &c.KubeBurst)
	r.positiveInt("EVICTION_CONCURRENCY", &c.EvictionConcurrency)
	r.positiveInt("RECORD_CONCURRENCY", &c.RecordConcurrency)
	r.parse("CLUSTER_EVICTION_RATE", func(v string) (err error) { c.ClusterEvictionRate, err = parseRate(v); return err })
	r.positiveInt("MAX_CONCURRENCY", &c.MaxConcurrency)
	r.parse("TAINT_EFFECT", func(v string) (err error) { c.TaintEffect, err = parseTaintEffect(v); return err })
	r.boolean("EXCLUDE_FROM_LB", &c.ExcludeFromLB)
	r.boolean("EVICT_UNMANAGED", &c.EvictUnmanaged)
	r.duration("DEADLINE_RESERVE", &c.DeadlineReserve)
	r.duration("SAFETY_MARGIN", &c.SafetyMargin)
	r.boolean("DEADLINE_DELETE", &c.DeadlineDelete)
	r.positiveDuration("STUCK_POD_TIMEOUT", &c.StuckPodTimeout)
	r.parse("KUBECONFIG", func(v string) error { c.Kubeconfig = v; return nil })
	r.parse("LOG_LEVEL", func(v string) error { return c.LogLevel.UnmarshalText([]byte(v)) })
	r.parse("WEBHOOK_SECRET_ARN", func(v string) (err error) { c.WebhookSecretARN, err = parseSecretARN(v); return err })
	r.parse("WEBHOOK_TEMPLATE", func(v string) error { _, err := webhook.ParseTemplate(v); c.WebhookTemplate = v; return err })
	r.parse("WEBHOOK_HEADERS", func(v string) (err error) { c.WebhookHeaders, err = webhook.ParseHeaders(v); return err })
	r.parse("SWEEP_RULE", func(v string) (err error) { c.SweepRule, err = parseSweepRule(v); return err })
	r.parse("CORDON_QUEUE_ARN", func(v string) (err error) { c.CordonQueueARN, err = parseQueueARN(v); return err })
	r.boolean("KUBE_EVENTS", &c.KubeEvents)
	r.boolean("METRICS", &c.Metrics)
	r.parse("METRICS_STACK", func(v string) (err error) { c.MetricsStack, err = parseDimensionValue(v); return err })
	r.parse("ACCEPT", func(v string) (err error) { c.Accept, err = event.ParseShapes(v); return err })
	r.parse("SNS_TOPICS", func(v string) (err error) { c.SNSTopics, err = event.ParseTopics(v); return err })
	r.hooks(&c.Hooks)
	r.loadReturn(&c.Return)
	r.loadDrains(&c.Drains)
	r.loadGroups(&c.Groups)
	r.check(Prefix+"CLUSTER_ENDPOINTS", checkEndpointClusters(c.Clusters, c.ClusterEndpoints))
	r.check(Prefix+"CLUSTER_CAS", checkCAClusters(c.ClusterEndpoints, c.ClusterCAs))
	if err := errors.Join(r.errs...); err != nil {
		return Config{}, fmt.Errorf("loading configuration: %w", err)
	}
	return c, nil
}

func checkEndpointClusters(clusters []string, endpoints map[string]string) error {
	known := map[string]bool{}
	for _, c := range clusters {
		known[c] = true
	}
	for name := range endpoints {
		if !known[name] {
			return fmt.Errorf("endpoint for cluster %q, which is not in %sCLUSTERS", name, Prefix)
		}
	}
	return nil
}

// parseDimensionValue accepts a CloudWatch dimension value Drainpipe's
// alarms and dashboard can name: printable ASCII without spaces or quotes
// (it sits inside the dashboard's SEARCH expression), not starting with
// ':', at most 255 characters.
func parseDimensionValue(v string) (string, error) {
	if len(v) > 255 || strings.HasPrefix(v, ":") || strings.ContainsFunc(v, func(r rune) bool { return r <= ' ' || r > '~' || r == '"' || r == '\'' }) {
		return "", fmt.Errorf("want printable ASCII without spaces or quotes, not starting with ':', at most 255 characters, got %q", v)
	}
	return v, nil
}

// parseQueueARN accepts an SQS queue's ARN
// (arn:PARTITION:sqs:REGION:ACCOUNT:NAME): the event source ARN of the
// records it names.
func parseQueueARN(v string) (string, error) {
	p := strings.Split(v, ":")
	if len(p) != 6 || p[0] != "arn" || p[1] == "" || p[2] != "sqs" || p[3] == "" || len(p[4]) != 12 || p[5] == "" ||
		len(p[5]) > 80 || strings.ContainsAny(p[5], " /") {
		return "", fmt.Errorf("want an SQS queue ARN (arn:aws:sqs:REGION:ACCOUNT:NAME), got %q", v)
	}
	return v, nil
}

// parseSweepRule accepts an EventBridge rule ARN or a rule name.
func parseSweepRule(v string) (string, error) {
	if strings.HasPrefix(v, "arn:") {
		if !strings.Contains(v, ":events:") || !strings.Contains(v, ":rule/") {
			return "", fmt.Errorf("want an EventBridge rule ARN (arn:aws:events:REGION:ACCOUNT:rule/NAME) or a rule name, got %q", v)
		}
		return v, nil
	}
	if v == "" || len(v) > 64 || strings.ContainsAny(v, " /:") {
		return "", fmt.Errorf("want an EventBridge rule ARN or a rule name (at most 64 characters), got %q", v)
	}
	return v, nil
}
