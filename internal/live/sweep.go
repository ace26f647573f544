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

// Sweep is the sweep the function runs on its schedule and `drainpipe
// sweep` runs once, each sweep's counts emitted as metrics. It is the
// handler's Sweeper.
type Sweep struct {
	sweeper *sweep.Sweeper
	metrics *metrics.Emitter // nil: no metrics
}

var _ handler.Sweeper = (*Sweep)(nil)

// newSweep builds the sweep: a scheduled event nobody sent is acted on
// through actor, the pipeline, as its notice would be; hooks read how long
// a terminate lifecycle action can hold a node.
func newSweep(cfg config.Config, opts Options, clusters pipeline.Clusters, lookup *instance.Lookup, hooks sweep.Hooks,
	m *metrics.Emitter, log *slog.Logger, actor handler.Actor) (*Sweep, error) {
	s, err := sweep.New(sweep.Config{
		Clusters:        cfg.Clusters,
		DryRun:          cfg.DryRun || opts.DryRun,
		OutOfService:    cfg.Return.OutOfService,
		RebalanceHold:   cfg.Return.RebalanceHold,
		Margin:          cfg.Return.SweepMargin,
		ScheduledAction: cfg.Policy.For(event.KindScheduledChange),
	}, sweep.Deps{Clients: clusters, EC2: lookup, Actor: actor, NodeOf: nodemap.Node, Hooks: hooks, Log: log})
	if err != nil {
		return nil, fmt.Errorf("building the sweep: %w", err)
	}
	return &Sweep{sweeper: s, metrics: m}, nil
}

// Run runs one sweep, emits its counts and returns its report.
func (s *Sweep) Run(ctx context.Context) sweep.Report {
	rep := s.sweeper.Sweep(ctx)
	if s.metrics != nil {
		s.metrics.RecordSweep(rep)
	}
	return rep
}

// Sweep runs one sweep for a sweep message: its report as the message's
// result.
func (s *Sweep) Sweep(ctx context.Context) handler.Result {
	return s.Run(ctx).Result()
}
