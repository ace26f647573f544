package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/drainpipe/drainpipe/internal/config"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/live"
	"github.com/drainpipe/drainpipe/internal/pipeline"
	"github.com/drainpipe/drainpipe/internal/policy"
)

// offline is explain's actor: the live actor's first decision
// (pipeline.Decide), then, where the live actor would call AWS, a
// description of what it would do.
type offline struct {
	cfg config.Config
	now time.Time
}

func (o offline) Act(_ context.Context, t handler.Task) handler.Result {
	done := func(reason string) handler.Result { return handler.Result{Status: handler.StatusDone, Reason: reason} }
	if t.InstanceID == "" && t.Reservation != "" {
		return done("would " + handler.Describe(t) + policyNote(t))
	}
	t, step, r := pipeline.Decide(t, live.PipelineConfig(o.cfg, live.Options{}).Rules(), o.now)
	switch step {
	case pipeline.StepIgnore:
		if hooks := hookNames(t); hooks != "" {
			r.Reason += "; hook " + hooks + " completed with CONTINUE"
		}
		return r
	case pipeline.StepLaunch:
		return done("launch hook " + hookNames(t) + " " + launchPlan(o.cfg.Hooks.LaunchWaitReady))
	case pipeline.StepRestore:
		return done("would give back the node of " + t.InstanceID + " if Drainpipe holds it (docs/return-to-service.md)")
	}
	if late := pipeline.LateNote(t, o.now); late != "" {
		return done(late + "would cordon and taint the node of " + t.InstanceID)
	}
	return done("would " + handler.Describe(t) + policyNote(t))
}

// Sweep is explain's sweeper: it says what a sweep would check.
func (offline) Sweep(context.Context) handler.Result {
	return handler.Result{Status: handler.StatusDone,
		Reason: "would sweep the nodes Drainpipe holds and the scheduled events EC2 lists (docs/sweep.md)"}
}

// policyNote names the setting behind the task's action.
func policyNote(t handler.Task) string {
	var vars []string
	for _, in := range t.Interruptions {
		if v := policy.Var(in.Kind); v != "" && !slices.Contains(vars, v) {
			vars = append(vars, v)
		}
	}
	if len(vars) == 0 {
		return ""
	}
	return fmt.Sprintf(" (policy %s: %s)", t.Action, strings.Join(vars, ", "))
}

func hookNames(t handler.Task) string {
	var hooks []string
	for _, in := range t.Interruptions {
		if in.Lifecycle != nil {
			hooks = append(hooks, in.Lifecycle.ASG+"/"+in.Lifecycle.Hook)
		}
	}
	return strings.Join(hooks, ", ")
}

// launchPlan says what the function does with a launch hook: it never
// cordons or drains for one, whatever DRAINPIPE_ACTION_* say.
func launchPlan(waitReady bool) string {
	if !waitReady {
		return "completed with CONTINUE at once (DRAINPIPE_LAUNCH_WAIT_READY=false); nothing is cordoned or drained"
	}
	return "completed with CONTINUE once the instance's node is Ready in its cluster, or on the record's last " +
		"delivery (DRAINPIPE_LAUNCH_WAIT_READY); nothing is cordoned or drained"
}
