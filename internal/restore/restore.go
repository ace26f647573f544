package restore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/nodemap"
)

// returnKinds are the kinds whose cordon a state change to running ends:
// the instance was stopped, hibernated or rebooted and is back.
var returnKinds = []string{string(event.KindStateChange), string(event.KindSpotInterruption),
	string(event.KindScheduledChange)}

// Of returns a task's restore when it is the task's newest notice; an
// older restore is overtaken by the threat after it, and a pending
// terminate hook (the instance is terminating) always wins. A launch hook
// is no threat: an instance launching, or leaving a warm pool, is exactly
// one whose node comes back.
func Of(ins []event.Interruption) (event.Interruption, bool) {
	var newest event.Interruption
	found := false
	for _, in := range ins {
		if in.Kind == event.KindASGLaunchLifecycle {
			continue
		}
		if in.Lifecycle != nil {
			return event.Interruption{}, false
		}
		if !found || in.Time.After(newest.Time) {
			newest, found = in, true
		}
	}
	return newest, found && newest.Restore
}

// NewestTime is the event time of a task's newest threat (restores and
// launch hooks aside), kept on the node so an older restore cannot undo
// the hold.
func NewestTime(ins []event.Interruption) time.Time {
	var newest time.Time
	for _, in := range ins {
		if !in.Restore && in.Kind != event.KindASGLaunchLifecycle && in.Time.After(newest) {
			newest = in.Time
		}
	}
	return newest
}

// Without drops a task's (overtaken) restores.
func Without(ins []event.Interruption) []event.Interruption {
	return slices.DeleteFunc(slices.Clone(ins), func(in event.Interruption) bool { return in.Restore })
}

// RestoreAndLaunch applies the task's restore (Of) and, when the task
// also carries launch hooks (a warm-pool instance leaving the pool, a
// scale-out whose pending/running notice came in the same batch), then
// waits for the node to be Ready as a launch does: the hooks are completed
// only after that.
func (s *Restorer) RestoreAndLaunch(ctx context.Context, t Task, log *slog.Logger) Result {
	in, _ := Of(t.Interruptions)
	r := s.restore(ctx, in, t, log)
	if !hasLaunch(t.Interruptions) || r.Status == Retry {
		return r
	}
	l := s.Launch(ctx, t, log)
	l.Reason = r.Reason + "; " + l.Reason
	if l.Node == "" {
		l.Node = r.Node
	}
	return l
}

// hasLaunch reports whether the task carries a launch lifecycle action.
func hasLaunch(ins []event.Interruption) bool {
	return slices.ContainsFunc(ins, func(in event.Interruption) bool {
		return in.Kind == event.KindASGLaunchLifecycle
	})
}

// restore gives back a node Drainpipe took for a threat that has passed:
// a state change to pending/running (for a stop, hibernate or reboot), or
// an AWS Health notice closed (for that notice). An instance whose node
// carries no Drainpipe marks costs one GET and is ignored.
func (s *Restorer) restore(ctx context.Context, in event.Interruption, t Task, log *slog.Logger) Result {
	inst, found, err := s.Lookups.Get(ctx, t.InstanceID)
	if err != nil {
		return retry(fmt.Sprintf("looking up instance: %v", err))
	}
	if !found {
		return ignored("instance not found in EC2")
	}
	if inst.State != "running" && inst.State != "pending" {
		return ignored(fmt.Sprintf("%s, but EC2 reports the instance %s: its node stays as it is", in.Summary, inst.State))
	}
	if inst.Cluster == "" {
		return ignored("instance ignored: " + s.WhyIgnored(inst))
	}
	client, err := s.Clusters.Client(ctx, inst.Cluster)
	if err != nil {
		return retry(fmt.Sprintf("connecting to cluster %s: %v", inst.Cluster, err))
	}
	node, err := s.node(ctx, client, inst)
	if errors.Is(err, nodemap.ErrNotFound) || apierrors.IsNotFound(err) {
		return ignored(fmt.Sprintf("no node of cluster %s runs on the instance: nothing to give back", inst.Cluster))
	}
	if err != nil {
		return retry(fmt.Sprintf("finding the node in cluster %s: %v", inst.Cluster, err))
	}
	match := drain.Match{Kinds: returnKinds, Running: true, RestoreTime: in.Time}
	if in.Kind == event.KindScheduledChange {
		match = drain.Match{Kinds: []string{string(event.KindScheduledChange)}, EventID: in.EventID, Running: true,
			RestoreTime: in.Time}
	}
	return s.GiveBack(ctx, client, node, match, in.Summary, log.With("cluster", inst.Cluster))
}

// GiveBack gives node back when it carries Drainpipe's marks and match
// fits; it reads the node it was handed first, so an unmarked node costs
// no further request.
func (s *Restorer) GiveBack(ctx context.Context, client kubernetes.Interface, node *corev1.Node, match drain.Match, why string, log *slog.Logger) Result {
	if m := drain.ReadMarks(node); !m.Held() {
		return Result{Status: Ignored, Node: node.Name,
			Reason: fmt.Sprintf("node %s carries no Drainpipe marks: nothing to give back", node.Name)}
	}
	if s.cfg.DryRun {
		what := fmt.Sprintf("dry run: would give node %s back (%s)", node.Name, why)
		log.Info(what, "node", node.Name)
		return Result{Status: Done, Reason: what, Node: node.Name}
	}
	g, err := drain.Uncordon(ctx, client, node.Name, match)
	if err != nil && apierrors.IsNotFound(err) {
		return Result{Status: Ignored, Node: node.Name, Reason: fmt.Sprintf("node %s is gone", node.Name)}
	}
	if err != nil {
		return Result{Status: Retry, Node: node.Name, Reason: fmt.Sprintf("giving node %s back: %v", node.Name, err)}
	}
	if !g.Back && len(g.Changed) > 0 {
		return Result{Status: Done, Node: node.Name,
			Reason: fmt.Sprintf("node %s stays held: %s", node.Name, g.Reason)}
	}
	if !g.Back {
		return Result{Status: Ignored, Node: node.Name,
			Reason: fmt.Sprintf("node %s left as it is: %s", node.Name, g.Reason)}
	}
	log.Info("node given back", "node", node.Name, "changed", g.Changed, "held_for", g.Marks.Kind, "why", why)
	return Result{Status: Done, Node: node.Name,
		Reason: fmt.Sprintf("gave node %s back (%s): undid %v", node.Name, why, g.Changed)}
}
