// Command lambda is Drainpipe's function: it reads the configuration, picks
// the actor and hands SQS batches to the handler. Build it with
// -tags lambda.norpc for the provided.al2023 runtime.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/drainpipe/drainpipe/internal/config"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/live"
)

func main() {
	// lambda.Start only returns on failure; reaching the end of main
	// means initialisation failed, which the runtime reports.
	os.Exit(run())
}

func run() int {
	cfg, err := config.Load(os.Getenv)
	if err != nil {
		newLogger(slog.LevelInfo).Error("initialising", "error", err)
		return 1
	}
	log := newLogger(cfg.LogLevel)
	ctx := context.Background()

	var actor handler.Actor = handler.DryRun{Log: log}
	if !cfg.DryRun {
		if actor, err = newActor(ctx, cfg, log); err != nil {
			log.Error("initialising", "error", err)
			return 1
		}
	}
	h := handler.New(handler.Options{
		Policy:          cfg.Policy,
		Actor:           actor,
		Log:             log,
		Concurrency:     cfg.RecordConcurrency,
		MaxEventAge:     cfg.MaxEventAge,
		DeadlineReserve: cfg.DeadlineReserve,
	})
	log.Info("started", "dry_run", cfg.DryRun, "clusters", cfg.Clusters)
	lambda.Start(h.Handle)
	return 1
}

// newActor builds the live actor (EC2 lookup, EKS or kubeconfig clients,
// drain, lifecycle hooks) once per cold start.
func newActor(ctx context.Context, cfg config.Config, log *slog.Logger) (handler.Actor, error) {
	awsCfg, err := live.AWSConfig(ctx)
	if err != nil {
		return nil, err
	}
	return live.NewActor(cfg, awsCfg, log, live.Options{})
}
