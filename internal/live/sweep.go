package live

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/drainpipe/drainpipe/internal/config"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/instance"
	"github.com/drainpipe/drainpipe/internal/metrics"
	"github.com/drainpipe/drainpipe/internal/nodemap"
	"github.com/drainpipe/drainpipe/internal/pipeline"
	"github.com/drainpipe/drainpipe/internal/sweep"
)

// NewSweeper builds the sweep the function runs on its schedule and
// `drainpipe sweep` runs once: act is the pipeline's Act, through which a
// scheduled event nobody sent is acted on as its notice would be; hooks
// read how long a terminate lifecycle action can hold a node.
func NewSweeper(cfg config.Config, dryRun bool, clusters pipeline.Clusters, lookup *instance.Lookup, hooks sweep.Hooks,
	log *slog.Logger, act func(context.Context, handler.Task) handler.Result) (*sweep.Sweeper, error) {
	s, err := sweep.New(sweep.Config{
		Clusters:        cfg.Clusters,
		DryRun:          cfg.DryRun || dryRun,
		OutOfService:    cfg.Return.OutOfService,
		RebalanceHold:   cfg.Return.RebalanceHold,
		Margin:          cfg.Return.SweepMargin,
		ScheduledAction: cfg.Policy.For(event.KindScheduledChange),
		HookNames:       cfg.Hooks.HookNames,
	}, sweep.Deps{Clients: clusters, EC2: lookup, Act: act, NodeOf: nodemap.Node, Hooks: hooks, Log: log})
	if err != nil {
		return nil, fmt.Errorf("building the sweep: %w", err)
	}
	return s, nil
}

// newSweep is the pipeline's Deps.Sweep: one sweep, its counts emitted.
func newSweep(cfg config.Config, opts Options, clusters pipeline.Clusters, lookup *instance.Lookup, hooks sweep.Hooks,
	m *metrics.Emitter, log *slog.Logger, act func(context.Context, handler.Task) handler.Result) (func(context.Context) handler.Result, error) {
	s, err := NewSweeper(cfg, opts.DryRun, clusters, lookup, hooks, log, act)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) handler.Result {
		rep := s.Sweep(ctx)
		if m != nil {
			m.RecordSweep(rep)
		}
		return rep.Result()
	}, nil
}
