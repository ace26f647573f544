package pipeline

import (
	"fmt"
	"strings"

	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/instance"
)

// credible returns the task without the interruptions EC2's answer
// (already fetched, no new call) contradicts, and why each was dropped:
//
//   - a spot or rebalance notice for an instance that is not a Spot
//     instance;
//   - a state change to stopping/stopped (or any state change) for an
//     instance now pending or running: it was started again since;
//   - a Spot stop or hibernate for an instance now pending, or running
//     since after the notice (LaunchTime is the last start): it came back.
//     A Spot stop warning for an instance still running since before it is
//     the normal case (two minutes' notice) and is believed.
//
// Lifecycle hooks are always kept: they must be completed.
func credible(t handler.Task, inst instance.Instance) (handler.Task, []string) {
	var kept []event.Interruption
	var why []string
	for _, in := range t.Interruptions {
		if reason := contradicted(in, inst); reason != "" && in.Lifecycle == nil {
			why = append(why, reason)
			continue
		}
		kept = append(kept, in)
	}
	t.Interruptions = kept
	return t, why
}

func contradicted(in event.Interruption, inst instance.Instance) string {
	running := inst.State == "running" || inst.State == "pending"
	switch in.Kind {
	case event.KindSpotInterruption, event.KindRebalanceRecommendation:
		if !inst.Spot() {
			return fmt.Sprintf("%s for an instance EC2 does not report as Spot (instance lifecycle %q)", in.Kind,
				orOnDemand(inst.Lifecycle))
		}
		if in.Kind == event.KindSpotInterruption && (in.InstanceAction == "stop" || in.InstanceAction == "hibernate") &&
			(inst.State == "pending" || (running && inst.LaunchTime.After(in.Time))) {
			return fmt.Sprintf("spot %s claim is out of date: EC2 reports the instance %s again since %s", in.InstanceAction,
				inst.State, inst.LaunchTime.UTC().Format("15:04:05Z"))
		}
	case event.KindStateChange:
		if running {
			return fmt.Sprintf("state %s claim is out of date: EC2 reports the instance %s", in.State, inst.State)
		}
	}
	return ""
}

func orOnDemand(lifecycle string) string {
	if lifecycle == "" {
		return "on-demand"
	}
	return lifecycle
}

// joinReasons joins the reasons interruptions were dropped for a result.
func joinReasons(why []string) string { return strings.Join(why, "; ") }
