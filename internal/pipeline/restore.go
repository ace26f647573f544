package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/instance"
	"github.com/drainpipe/drainpipe/internal/nodemap"
)

// NodeGetter finds the node running on an instance and returns it as read,
// returning an error wrapping nodemap.ErrNotFound when there is none.
// nodemap.Node fits.
type NodeGetter func(ctx context.Context, client kubernetes.Interface, inst instance.Instance) (*corev1.Node, error)

// getNode is FindNode followed by a GET, for Deps without a NodeGetter.
func (a *Actor) getNode(ctx context.Context, client kubernetes.Interface, inst instance.Instance) (*corev1.Node, error) {
	if a.nodeOf != nil {
		return a.nodeOf(ctx, client, inst)
	}
	name, err := a.findNode(ctx, client, inst)
	if err != nil {
		return nil, err
	}
	return client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
}

// returnKinds are the kinds whose cordon a state change to running ends:
// the instance was stopped, hibernated or rebooted and is back.
var returnKinds = []string{string(event.KindStateChange), string(event.KindSpotInterruption),
	string(event.KindScheduledChange)}

// restoreOf returns the task's restore when it is the task's newest
// notice; an older restore is overtaken by the threat after it, and a
// pending terminate hook (the instance is terminating) always wins. A
// launch hook is no threat: an instance launching, or leaving a warm pool,
// is exactly one whose node comes back.
func restoreOf(t handler.Task) (event.Interruption, bool) {
	var newest event.Interruption
	found := false
	for _, in := range t.Interruptions {
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

// newestTime is the event time of the task's newest threat (restores and
// launch hooks aside), kept on the node so an older restore cannot undo
// the hold.
func newestTime(t handler.Task) time.Time {
	var newest time.Time
	for _, in := range t.Interruptions {
		if !in.Restore && in.Kind != event.KindASGLaunchLifecycle && in.Time.After(newest) {
			newest = in.Time
		}
	}
	return newest
}

// restoreAndLaunch applies a restore and, when the task also carries
// launch hooks (a warm-pool instance leaving the pool, a scale-out whose
// pending/running notice came in the same batch), then waits for the node
// to be Ready as a launch does: the hooks are completed only after that.
func (a *Actor) restoreAndLaunch(ctx context.Context, in event.Interruption, t handler.Task, hooks *[]hook, log *slog.Logger) handler.Result {
	r := a.restore(ctx, in, t, log)
	if !hasLaunch(t) || r.Status == handler.StatusRetry {
		return r
	}
	l := a.launch(ctx, t, hooks, log)
	l.Reason = r.Reason + "; " + l.Reason
	if l.Node == "" {
		l.Node = r.Node
	}
	return l
}

// hasLaunch reports whether the task carries a launch lifecycle action.
func hasLaunch(t handler.Task) bool {
	return slices.ContainsFunc(t.Interruptions, func(in event.Interruption) bool {
		return in.Kind == event.KindASGLaunchLifecycle
	})
}

// withoutRestores drops the task's (overtaken) restores.
func withoutRestores(t handler.Task) handler.Task {
	t.Interruptions = slices.DeleteFunc(slices.Clone(t.Interruptions), func(in event.Interruption) bool { return in.Restore })
	return t
}

// restore gives back a node Drainpipe took for a threat that has passed:
// a state change to pending/running (for a stop, hibernate or reboot), or
// an AWS Health notice closed (for that notice). An instance whose node
// carries no Drainpipe marks costs one GET and is ignored.
func (a *Actor) restore(ctx context.Context, in event.Interruption, t handler.Task, log *slog.Logger) handler.Result {
	inst, found, err := a.lookups.Get(ctx, t.InstanceID)
	switch {
	case err != nil:
		return retry(fmt.Sprintf("looking up instance: %v", err))
	case !found:
		return ignored("instance not found in EC2")
	case inst.State != "running" && inst.State != "pending":
		return ignored(fmt.Sprintf("%s, but EC2 reports the instance %s: its node stays as it is", in.Summary, inst.State))
	case inst.Cluster == "":
		return ignored("instance ignored: " + a.whyIgnored(inst))
	}
	client, err := a.clusters.Client(ctx, inst.Cluster)
	if err != nil {
		return retry(fmt.Sprintf("connecting to cluster %s: %v", inst.Cluster, err))
	}
	node, err := a.getNode(ctx, client, inst)
	if errors.Is(err, nodemap.ErrNotFound) || isNotFound(err) {
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
	return a.giveBack(ctx, client, node, match, in.Summary, log.With("cluster", inst.Cluster))
}

// giveBack gives node back when it carries Drainpipe's marks and match
// fits; it reads the node it was handed first, so an unmarked node costs
// no further request.
func (a *Actor) giveBack(ctx context.Context, client kubernetes.Interface, node *corev1.Node, match drain.Match, why string, log *slog.Logger) handler.Result {
	if m := drain.ReadMarks(node); !m.Held() {
		return handler.Result{Status: handler.StatusIgnored, Node: node.Name,
			Reason: fmt.Sprintf("node %s carries no Drainpipe marks: nothing to give back", node.Name)}
	}
	if a.cfg.DryRun {
		what := fmt.Sprintf("dry run: would give node %s back (%s)", node.Name, why)
		log.Info(what, "node", node.Name)
		return handler.Result{Status: handler.StatusDone, Reason: what, Node: node.Name}
	}
	g, err := drain.Uncordon(ctx, client, node.Name, match)
	switch {
	case err != nil && isNotFound(err):
		return handler.Result{Status: handler.StatusIgnored, Node: node.Name, Reason: fmt.Sprintf("node %s is gone", node.Name)}
	case err != nil:
		return handler.Result{Status: handler.StatusRetry, Node: node.Name, Reason: fmt.Sprintf("giving node %s back: %v", node.Name, err)}
	case !g.Back && len(g.Changed) > 0:
		return handler.Result{Status: handler.StatusDone, Node: node.Name,
			Reason: fmt.Sprintf("node %s stays held: %s", node.Name, g.Reason)}
	case !g.Back:
		return handler.Result{Status: handler.StatusIgnored, Node: node.Name,
			Reason: fmt.Sprintf("node %s left as it is: %s", node.Name, g.Reason)}
	}
	log.Info("node given back", "node", node.Name, "changed", g.Changed, "held_for", g.Marks.Kind, "why", why)
	return handler.Result{Status: handler.StatusDone, Node: node.Name,
		Reason: fmt.Sprintf("gave node %s back (%s): undid %v", node.Name, why, g.Changed)}
}
