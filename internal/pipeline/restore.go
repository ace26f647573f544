package pipeline

import (
	"context"
	"log/slog"
	"time"

	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/instance"
	"github.com/drainpipe/drainpipe/internal/restore"
)

// NodeGetter finds the node running on an instance and returns it as read;
// nodemap.Node fits.
type NodeGetter = restore.NodeGetter

// newRestorer builds the Actor's return to service (internal/restore)
// over its lookups, clusters, nodes, budget and clock.
func (a *Actor) newRestorer() (*restore.Restorer, error) {
	return restore.New(restore.Config{DryRun: a.cfg.DryRun, LaunchNoWait: a.cfg.LaunchNoWait, LaunchPoll: a.cfg.LaunchPoll,
		RebalanceHold: a.cfg.RebalanceHold, MaxReceiveCount: a.cfg.MaxReceiveCount},
		restore.Deps{Lookups: a.lookups, Clusters: a.clusters, Find: a.findNode, NodeOf: a.nodeOf, WhyIgnored: a.whyIgnored,
			Budget: func(ctx context.Context) (context.Context, context.CancelFunc) { return a.budget(ctx, time.Time{}) },
			Clock:  a.clock})
}

// returnTask is t as return to service reads it; its group check may drop
// hooks from *hooks.
func (a *Actor) returnTask(t handler.Task, hooks *[]hook, log *slog.Logger) restore.Task {
	return restore.Task{InstanceID: t.InstanceID, Interruptions: t.Interruptions, Hooks: *hooks,
		Foreign: func(inst instance.Instance) (string, bool) { return a.checkGroupTag(t, inst, hooks, log) }}
}

// fromRestore is a return to service's outcome as the handler reads it.
func fromRestore(r restore.Result) handler.Result {
	s := map[restore.Status]handler.Status{restore.Done: handler.StatusDone, restore.Ignored: handler.StatusIgnored,
		restore.Retry: handler.StatusRetry}[r.Status]
	return handler.Result{Status: s, Reason: r.Reason, Node: r.Node, HoldFor: r.HoldFor}
}

// restoreOf returns the task's restore when it is its newest notice
// (restore.Of).
func restoreOf(t handler.Task) (event.Interruption, bool) { return restore.Of(t.Interruptions) }
