// Package live builds the live Actor from the configuration: the AWS clients,
// the per-cluster Kubernetes clients (EKS, or a kubeconfig in local mode),
// the drain engine and the lifecycle hooks. The Lambda and `drainpipe run`
// share it so both act exactly alike.
package live

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/config"
	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/eks"
	"github.com/drainpipe/drainpipe/internal/group"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/instance"
	"github.com/drainpipe/drainpipe/internal/lifecycle"
	"github.com/drainpipe/drainpipe/internal/metrics"
	"github.com/drainpipe/drainpipe/internal/nodemap"
	"github.com/drainpipe/drainpipe/internal/pipeline"
	"github.com/drainpipe/drainpipe/internal/redeliver"
	"github.com/drainpipe/drainpipe/internal/version"
)

// awsRetryAttempts is above the SDK's default of 3: a spot wave brings many
// concurrent calls and throttling is the expected failure then.
const awsRetryAttempts = 6

// awsMaxBackoff caps the SDK's wait before a retry (its default is 20 s):
// six throttled attempts must fit well inside an invocation's budget, or
// a throttled lookup or heartbeat starves the hooks it should keep alive.
// Longer backoff is the queue's: the message comes back later.
const awsMaxBackoff = 2 * time.Second

// Options add what the configuration does not carry.
type Options struct {
	// DryRun overrides the configuration's dry-run switch when set.
	DryRun bool
	// OnDrainEvent observes the drain engine's events (timelines, metrics).
	OnDrainEvent func(drain.Event)
	// Recorder observes outcomes, besides the metrics and webhook that the
	// configuration turns on; nil adds nothing.
	Recorder pipeline.Recorder
	// KubeContext, in local mode, is the kubeconfig context every cluster
	// is reached through (the command-line tool's --context).
	KubeContext string
	// Metrics receives the pipeline's metrics; nil writes them to stdout
	// (when the configuration's Metrics is on). Share it with the handler's
	// OnRecord so all metrics go one way.
	Metrics *metrics.Emitter
}

// AWSConfig loads the SDK configuration from the environment (the Lambda
// role's credentials, AWS_REGION, and AWS_ENDPOINT_URL_* overrides). Every
// call carries Drainpipe's version as the SDK's app id, for CloudTrail.
// opts come last (WithSDKLog).
func AWSConfig(ctx context.Context, opts ...func(*awsconfig.LoadOptions) error) (aws.Config, error) {
	cfg, err := awsconfig.LoadDefaultConfig(ctx, append([]func(*awsconfig.LoadOptions) error{
		awsconfig.WithRetryer(func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxAttempts, o.MaxBackoff = awsRetryAttempts, awsMaxBackoff
			})
		}), awsconfig.WithAppID(version.Get().AppID())}, opts...)...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("loading AWS configuration: %w", err)
	}
	return cfg, nil
}

// WithSDKLog sends the SDK's own lines to log (SDKLogger) from the start:
// the clients made while loading (the instance metadata service's, for
// credentials) keep the logger they were made with, so setting
// aws.Config.Logger afterwards leaves their lines plain text.
func WithSDKLog(log *slog.Logger) func(*awsconfig.LoadOptions) error {
	return awsconfig.WithLogger(SDKLogger(log))
}

// Actors are what the handler hands work to: the pipeline each instance's
// task, the sweep each sweep message. The sweep acts on the scheduled
// events it finds through the same pipeline.
type Actors struct {
	Pipeline *pipeline.Actor
	Sweep    *Sweep
}

// NewActors builds the live pipeline, then the sweep on it. It makes no
// network call: clients connect on first use, so a cold start stays fast.
func NewActors(cfg config.Config, awsCfg aws.Config, log *slog.Logger, opts Options) (Actors, error) {
	router, err := instance.NewRouter(cfg.Clusters, requiredTag(cfg.RequiredTag))
	if err != nil {
		return Actors{}, fmt.Errorf("routing instances: %w", err)
	}
	clusters, err := newClusters(cfg, awsCfg)
	if err == nil && opts.KubeContext != "" {
		err = useContext(clusters, opts.KubeContext)
	}
	if err != nil {
		return Actors{}, err
	}
	dcfg := drain.DefaultConfig()
	dcfg.Concurrency = cfg.EvictionConcurrency
	dcfg.TaintEffect = cfg.TaintEffect
	dcfg.ExcludeFromLB = cfg.ExcludeFromLB
	dcfg.EvictUnmanaged = cfg.EvictUnmanaged
	dcfg.SafetyMargin = cfg.SafetyMargin
	dcfg.DeadlineDelete = cfg.DeadlineDelete
	dcfg.StuckAfter = cfg.StuckPodTimeout
	dcfg.NoticePeriod = cfg.Drains.NoticePeriod
	dcfg.GraceCap = cfg.Drains.GraceCap
	dcfg.WarnAll = cfg.Drains.WarnAll
	obs, err := newObservers(cfg, awsCfg, log, opts)
	if err != nil {
		return Actors{}, fmt.Errorf("observing: %w", err)
	}
	paces := newPaces(cfg.ClusterEvictionRate, cfg.MaxConcurrency)
	lookup := instance.NewLookup(ec2.NewFromConfig(awsCfg), router)
	hooks := lifecycle.New(autoscaling.NewFromConfig(awsCfg))
	actor, err := pipeline.New(PipelineConfig(cfg, opts), pipeline.Deps{
		Instances: lookup,
		Clusters:  clusters,
		FindNode:  nodemap.Find,
		NodeOf:    nodemap.Node,
		NewDrainer: func(k kubernetes.Interface) pipeline.Drainer {
			c := dcfg
			c.Pace = paces.of(k)
			return obs.drainer(k, c, log)
		},
		Hooks:    hooks,
		Recorder: obs.recorder,
		Log:      log,
		Groups:   newGroups(cfg.Groups, log),
	})
	if err != nil {
		return Actors{}, fmt.Errorf("building the pipeline: %w", err)
	}
	sw, err := newSweep(cfg, opts, clusters, lookup, hooks, obs.metrics, log, actor)
	if err != nil {
		return Actors{}, err
	}
	return Actors{Pipeline: actor, Sweep: sw}, nil
}

// PipelineConfig is the live actor's configuration from cfg: `drainpipe
// explain` decides by the same settings.
func PipelineConfig(cfg config.Config, opts Options) pipeline.Config {
	return pipeline.Config{
		DryRun:          cfg.DryRun || opts.DryRun,
		MaxReceiveCount: cfg.MaxReceiveCount,
		MaxEventAge:     cfg.MaxEventAge,
		SafetyMargin:    cfg.SafetyMargin,
		// Lifecycle hooks: their reserve, heartbeat cap and served groups.
		HookReserve:       cfg.Hooks.Reserve,
		HeartbeatInterval: cfg.Hooks.HeartbeatCap,
		ASGNames:          cfg.Hooks.ASGNames,
		ASGNamePrefix:     cfg.Hooks.ASGNamePrefix,
		HookNames:         cfg.Hooks.HookNames,
		LaunchNoWait:      !cfg.Hooks.LaunchWaitReady,
		OutOfService:      cfg.Return.OutOfService,
		SkipKarpenter:     cfg.Return.SkipKarpenter,
		SkipAutoMode:      !cfg.Return.HandleAutoMode,
		RebalanceHold:     cfg.Return.RebalanceHold,
		Clusters:          cfg.Clusters,
	}
}

func newClusters(cfg config.Config, awsCfg aws.Config) (pipeline.Clusters, error) {
	if cfg.Kubeconfig != "" {
		l, err := eks.NewLocal(cfg.Kubeconfig, cfg.KubeQPS, cfg.KubeBurst)
		if err != nil {
			return nil, fmt.Errorf("local mode: %w", err)
		}
		return l, nil
	}
	overrides := map[string]eks.Endpoint{}
	for name, url := range cfg.ClusterEndpoints {
		overrides[name] = eks.Endpoint{URL: url, CAData: cfg.ClusterCAs[name]}
	}
	return eks.New(awsCfg, eks.Options{QPS: cfg.KubeQPS, Burst: cfg.KubeBurst, Overrides: overrides}), nil
}

// useContext reaches every cluster through one kubeconfig context; only
// local mode has contexts.
func useContext(clusters pipeline.Clusters, name string) error {
	local, ok := clusters.(*eks.Local)
	if !ok {
		return fmt.Errorf("kubeconfig context %q: only a kubeconfig (local mode) has contexts", name)
	}
	return local.UseContext(name)
}

// newGroups builds the group limit; nil (no limit) when it is off.
func newGroups(g config.Groups, log *slog.Logger) *group.Limiter {
	return group.New(group.Config{
		Max:   group.Limit{N: g.MaxDraining, Percent: g.MaxDrainingPercent},
		Label: g.Label, Namespace: g.Namespace, LeaseDuration: g.LeaseDuration,
	}, log)
}

func requiredTag(t config.Tag) string {
	if t.Key == "" || t.AnyValue {
		return t.Key
	}
	return t.Key + "=" + t.Value
}

// NewHandler builds the SQS batch handler the Lambda and `drainpipe run`
// share, so a configuration setting cannot reach one and miss the other.
// Tasks go to actor, sweep messages to sweeper (nil: none is run).
// queue (an *sqs.Client) hastens the redelivery of retried records by
// cfg.RetryDelay, and within their pending hooks' cap even when that is 0;
// nil, for records that came from no queue, leaves them be.
func NewHandler(cfg config.Config, actor handler.Actor, sweeper handler.Sweeper, log *slog.Logger, m *metrics.Emitter, queue redeliver.API) *handler.Handler {
	var onRetry func(context.Context, []handler.Retried)
	var onHold func(context.Context, events.SQSMessage, time.Duration)
	var sched *redeliver.Scheduler
	if queue != nil {
		sched = newScheduler(cfg, queue, log)
		onHold = sched.Hold
		onRetry = func(ctx context.Context, retried []handler.Retried) {
			rs := make([]redeliver.Retry, len(retried))
			for i, r := range retried {
				rs[i] = redeliver.Retry{Message: r.Message, Within: r.Within}
			}
			sched.Schedule(ctx, rs)
		}
	}
	return handler.New(handler.Options{
		Policy:          cfg.Policy,
		Actor:           actor,
		Log:             log,
		Concurrency:     cfg.RecordConcurrency,
		MaxEventAge:     cfg.MaxEventAge,
		DeadlineReserve: cfg.DeadlineReserve,
		OnRecord:        m.Record,
		OnRetry:         onRetry,
		Accept:          cfg.Accept,
		Topics:          cfg.SNSTopics,
		OnHold:          onHold,
		GiveWay:         giveWay(cfg, sched),
		SweepRule:       cfg.SweepRule,
		CordonQueue:     cfg.CordonQueueARN,
		Sweeper:         sweeper,
	})
}

func newScheduler(cfg config.Config, queue redeliver.API, log *slog.Logger) *redeliver.Scheduler {
	return redeliver.New(queue, cfg.RetryDelay, log)
}

// Giving way: the queue is asked once a batch's nodes are cordoned
// (DRAINPIPE_GIVE_WAY_AFTER at the latest), one GetQueueAttributes call
// per batch on its first delivery, and the records given back stay away
// giveWayHold (twice that without a deadline), enough for the event
// source's pollers (always receiving) to take the messages waiting first.
const giveWayHold = 5 * time.Second

// giveWayFirstPass is how long a batch that gives way evicts first, with
// retries, before its drains send the pods not yet sent their eviction
// once each and end (drain.Request.Yield): long enough for a budget's
// first grants to come back, short enough that the batches waiting behind
// it are cordoned within seconds.
const giveWayFirstPass = 2 * time.Second

// giveWay configures the handler's giving way: off without a queue to ask
// (sched nil), and when maxReceiveCount leaves fewer than two deliveries
// after the first, since the one given back would be the last, which
// completes a hook whatever its node holds.
func giveWay(cfg config.Config, sched *redeliver.Scheduler) handler.GiveWay {
	if sched == nil || cfg.GiveWayAfter <= 0 || cfg.MaxReceiveCount < 3 {
		return handler.GiveWay{}
	}
	return handler.GiveWay{After: cfg.GiveWayAfter, Hold: giveWayHold, FirstPass: giveWayFirstPass, Waiting: sched.Waiting}
}
