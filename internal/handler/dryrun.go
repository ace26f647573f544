package handler

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/policy"
)

// DryRun is an Actor that logs what it would do and does nothing.
type DryRun struct {
	Log *slog.Logger
}

// Act logs the task and reports it done.
func (d DryRun) Act(ctx context.Context, t Task) Result {
	var kinds []string
	for _, in := range t.Interruptions {
		kinds = append(kinds, string(in.Kind))
	}
	would := Describe(t)
	if d.Log != nil {
		d.Log.LogAttrs(ctx, slog.LevelInfo, "dry run",
			slog.String("instance_id", t.InstanceID),
			slog.String("action", string(t.Action)),
			slog.String("kind", strings.Join(dedupe(kinds), ",")),
			slog.String("would", would),
		)
	}
	return Result{Status: StatusDone, Reason: "dry run: would " + would}
}

// Describe says in words what acting on the task means, e.g. "cordon and
// drain the node of i-0123456789abcdef0, then complete hook my-asg/my-hook".
func Describe(t Task) string {
	var b strings.Builder
	of := "the node of " + t.InstanceID
	if t.InstanceID == "" && t.Reservation != "" {
		of = "the nodes of every instance in capacity reservation " + t.Reservation
	}
	switch t.Action {
	case policy.ActionCordonAndDrain:
		fmt.Fprintf(&b, "cordon and drain %s", of)
	case policy.ActionCordon:
		fmt.Fprintf(&b, "cordon %s", of)
	default:
		if slices.ContainsFunc(t.Interruptions, func(in event.Interruption) bool { return in.Restore }) {
			fmt.Fprintf(&b, "give back %s if Drainpipe holds it", of)
			break
		}
		fmt.Fprintf(&b, "leave %s alone", of)
	}
	var hooks []string
	for _, in := range t.Interruptions {
		if in.Lifecycle != nil {
			hooks = append(hooks, in.Lifecycle.ASG+"/"+in.Lifecycle.Hook)
		}
	}
	if len(hooks) > 0 {
		fmt.Fprintf(&b, ", then complete hook %s", strings.Join(hooks, ", "))
	}
	return b.String()
}
