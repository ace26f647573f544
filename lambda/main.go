// Command lambda is Drainpipe's function: it reads the configuration, picks
// the actor and hands SQS batches to the handler. Build it with
// -tags lambda.norpc for the provided.al2023 runtime.
package main

import (
	"context"
	"io"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"k8s.io/klog/v2"

	"github.com/drainpipe/drainpipe/internal/config"
	"github.com/drainpipe/drainpipe/internal/live"
	"github.com/drainpipe/drainpipe/internal/metrics"
	"github.com/drainpipe/drainpipe/internal/redeliver"
	"github.com/drainpipe/drainpipe/internal/version"
)

func main() {
	// lambda.Start only returns on failure; reaching the end of main
	// means initialisation failed, which the runtime reports.
	os.Exit(run())
}

func run() int {
	tuneGC(os.Getenv)
	cfg, err := config.Load(os.Getenv)
	if err != nil {
		newLogger(slog.LevelInfo, nil).Error("initialising", "error", err)
		return 1
	}
	current := &invocation{}
	log := newLogger(cfg.LogLevel, current)
	warnUnknown(log, os.Environ())
	// client-go logs through klog (throttling waits, warnings); route it
	// into the same JSON stream so every line carries the request id.
	klog.SetSlogLogger(log)
	ctx := context.Background()
	// Metrics go to stdout in CloudWatch's embedded format.
	var out io.Writer = io.Discard
	if cfg.Metrics {
		out = os.Stdout
	}
	m := metrics.New(out).WithStack(cfg.MetricsStack)

	// A dry run reads what acting would read (the instance in EC2, its
	// node in the cluster) and writes nothing: the pipeline logs what it
	// would do to which node, so a shadow run finds a wrong cluster name,
	// a missing tag or an unmapped role before the switch.
	acts, queue, err := newActors(ctx, cfg, log, m)
	if err != nil {
		log.Error("initialising", "error", err)
		return 1
	}
	if cfg.DryRun {
		queue = nil // not even a visibility change: retries come back on their own
	}
	h := live.NewHandler(cfg, acts.Pipeline, acts.Sweep, log, m, queue)
	v := version.Get()
	log.Info("started", "version", v.Version, "commit", v.Commit, "go", v.Go, "dry_run", cfg.DryRun, "clusters", cfg.Clusters)
	lambda.Start(func(ctx context.Context, batch events.SQSEvent) (events.SQSEventResponse, error) {
		if lc, ok := lambdacontext.FromContext(ctx); ok {
			current.set(lc.AwsRequestID)
			m.SetRequestID(lc.AwsRequestID)
			defer current.set("")
		}
		return h.Handle(ctx, batch)
	})
	return 1
}

// newActors builds the live actor (EC2 lookup, EKS or kubeconfig clients,
// drain, lifecycle hooks), the sweep on it, and the SQS client that
// hastens redeliveries, once per cold start, from one AWS configuration.
func newActors(ctx context.Context, cfg config.Config, log *slog.Logger, m *metrics.Emitter) (live.Actors, redeliver.API, error) {
	awsCfg, err := live.AWSConfig(ctx, live.WithSDKLog(log)) // the SDK's own lines as JSON too, like every other line
	if err != nil {
		return live.Actors{}, nil, err
	}
	acts, err := live.NewActors(cfg, awsCfg, log, live.Options{Metrics: m})
	if err != nil {
		return live.Actors{}, nil, err
	}
	return acts, sqs.NewFromConfig(awsCfg), nil
}
