package restore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/awserr"
	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/instance"
	"github.com/drainpipe/drainpipe/internal/lifecycle"
	"github.com/drainpipe/drainpipe/internal/nodemap"
)

// OnlyLaunches reports a task of launch lifecycle actions only. A launch
// hook in a task with other notices rides along with them and is completed
// when they are settled.
func OnlyLaunches(ins []event.Interruption) bool {
	for _, in := range ins {
		if in.Kind != event.KindASGLaunchLifecycle {
			return false
		}
	}
	return len(ins) > 0
}

// Launch settles a task of launch hooks: it never cordons or drains. Its
// hooks are completed (by the pipeline) with CONTINUE once the instance's
// node is Ready, at once when LaunchNoWait, or on their last delivery; a
// node not Ready when the budget runs out is retried, the keeper
// heartbeating the hooks meanwhile. Auto Scaling's default result for a
// hook left to time out, ABANDON, would terminate the new instance.
func (s *Restorer) Launch(ctx context.Context, t Task, log *slog.Logger) Result {
	if toWarmPool(t.Hooks) {
		return done("launch lifecycle action into the warm pool: the instance stops there and serves no node, " +
			"nothing to wait for")
	}
	// EC2's reads are eventually consistent: a new instance may not be
	// found yet, so that is retried (and completed on the last delivery).
	inst, found, err := s.Lookups.Get(ctx, t.InstanceID)
	if errors.Is(err, awserr.ErrNotFound) || (err == nil && !found) {
		return retry("launching instance not found in EC2 yet")
	}
	if err != nil {
		return retryAWS("looking up instance", err, log)
	}
	if t.Foreign != nil {
		if why, foreign := t.Foreign(inst); foreign {
			return ignored(why)
		}
	}
	if s.cfg.LaunchNoWait {
		return s.launchNoWait(ctx, inst, launchTime(t.Interruptions), log)
	}
	if inst.State != "pending" && inst.State != "running" {
		return s.launchGone(ctx, inst, launchTime(t.Interruptions), log)
	}
	if inst.Cluster == "" {
		return done("launching instance is in no cluster Drainpipe serves (" + s.WhyIgnored(inst) +
			"): no node to wait for")
	}
	client, err := s.Clusters.Client(ctx, inst.Cluster)
	if err != nil {
		return retryAWS("connecting to cluster "+inst.Cluster, err, log)
	}
	return s.waitReady(ctx, client, inst, launchTime(t.Interruptions), log.With("cluster", inst.Cluster))
}

// poolKinds are the holds a launch ends: only an instance scaled in to a
// warm pool (its terminate action drained and held the node, and a
// stopped pool's stop held it again) launches with a held node, and
// Auto Scaling now puts it in service.
var poolKinds = []string{string(event.KindASGLifecycle), string(event.KindStateChange)}

// launchTime is the event time of the task's newest launch action; zero
// when unknown.
func launchTime(ins []event.Interruption) time.Time {
	var at time.Time
	for _, in := range ins {
		if in.Kind == event.KindASGLaunchLifecycle && in.Time.After(at) {
			at = in.Time
		}
	}
	return at
}

// giveBackPool gives back, before the launch waits for it to be Ready, a
// node Drainpipe holds for the instance's terminate action or its stop in
// the warm pool: nothing else ends such a hold (with the pool Running no
// state change ever comes), and completing the launch on a node left
// cordoned would tell Auto Scaling of capacity that takes no pods. Done
// is false when the give-back must be retried; GiveBack logs it. Other
// holds (a retirement that stands, say) stay, and keep the node cordoned.
func (s *Restorer) giveBackPool(ctx context.Context, client kubernetes.Interface, node *corev1.Node, at time.Time,
	running bool, log *slog.Logger) (string, bool) {
	m := drain.ReadMarks(node)
	if !m.OutOfSvc && !m.Holds.Kinds(poolKinds...) {
		return "", true
	}
	r := s.GiveBack(ctx, client, node, drain.Match{Kinds: poolKinds, Running: running, RestoreTime: at},
		"the instance launches out of the warm pool: its terminate action's hold is over", log)
	if r.Status == Retry {
		return r.Reason, false
	}
	return r.Reason + "; ", true
}

// launchNoWait completes a launch without waiting for its node
// (DRAINPIPE_LAUNCH_WAIT_READY=false), after giving back the hold of an
// instance leaving a Running warm pool: its node is registered and would
// otherwise stay cordoned in service until the sweep's bound.
func (s *Restorer) launchNoWait(ctx context.Context, inst instance.Instance, at time.Time, log *slog.Logger) Result {
	const why = "launch hook completed without waiting for the node (DRAINPIPE_LAUNCH_WAIT_READY=false)"
	if inst.State != "pending" && inst.State != "running" {
		return s.launchGone(ctx, inst, at, log)
	}
	r := s.endPool(ctx, inst, at, true, log)
	if r.Status == Retry {
		return r
	}
	return Result{Status: Done, Node: r.Node, Reason: r.Reason + why}
}

// launchGone ends a launch whose instance no longer runs (stopped since
// it left the pool): nothing to wait for, but the terminate action's hold
// of its time in the pool is over all the same; a stop announced after
// the launch keeps its own hold.
func (s *Restorer) launchGone(ctx context.Context, inst instance.Instance, at time.Time, log *slog.Logger) Result {
	why := fmt.Sprintf("launching instance is %s: no node to wait for", inst.State)
	r := s.endPool(ctx, inst, at, false, log)
	if r.Status == Retry {
		return r
	}
	return Result{Status: Ignored, Node: r.Node, Reason: r.Reason + why}
}

// endPool ends the warm-pool holds on the launching instance's node
// (giveBackPool); Reason, when set, ends with "; ".
func (s *Restorer) endPool(ctx context.Context, inst instance.Instance, at time.Time, running bool, log *slog.Logger) Result {
	if inst.Cluster == "" {
		return Result{Status: Done}
	}
	client, err := s.Clusters.Client(ctx, inst.Cluster)
	if err != nil {
		return retryAWS("connecting to cluster "+inst.Cluster, err, log)
	}
	node, err := s.node(ctx, client, inst)
	if errors.Is(err, nodemap.ErrNotFound) || apierrors.IsNotFound(err) {
		return Result{Status: Done} // a new instance: no node yet, nothing held
	}
	if err != nil {
		return retry(fmt.Sprintf("finding the launching instance's node in cluster %s: %v", inst.Cluster, err))
	}
	given, ok := s.giveBackPool(ctx, client, node, at, running, log.With("cluster", inst.Cluster))
	if !ok {
		return retry("launching instance's node: " + given)
	}
	return Result{Status: Done, Node: node.Name, Reason: given}
}

// toWarmPool reports hooks that all put their instance in a warm pool.
func toWarmPool(hooks []lifecycle.Hook) bool {
	for _, h := range hooks {
		if !h.ToWarmPool() {
			return false
		}
	}
	return len(hooks) > 0
}

// waitReady reads the instance's node every LaunchPoll until it is Ready
// or the budget (the context's deadline less the hook reserve) ends.
func (s *Restorer) waitReady(ctx context.Context, client kubernetes.Interface, inst instance.Instance, at time.Time,
	log *slog.Logger) Result {
	wctx, cancel := s.Budget(ctx)
	defer cancel()
	tick := s.Clock.NewTicker(s.cfg.LaunchPoll)
	defer tick.Stop()
	state := "not registered"
	given := ""
	for first, checked := true, false; ; first = false {
		// Each read gets the whole context: a node Ready when the
		// budget is already spent still completes the hook now.
		node, err := s.node(ctx, client, inst)
		if err == nil && !checked {
			why, ok := s.giveBackPool(ctx, client, node, at, true, log)
			if !ok {
				return retry("launching instance's node: " + why)
			}
			given, checked = why, true
		}
		if err == nil && nodeReady(node) {
			return Result{Status: Done, Node: node.Name,
				Reason: fmt.Sprintf("%snode %s of cluster %s is Ready: launch hook completed", given, node.Name, inst.Cluster)}
		}
		if err == nil {
			state = "registered as " + node.Name + ", not Ready"
		} else if errors.Is(err, nodemap.ErrNotFound) || apierrors.IsNotFound(err) {
			state = "not registered"
		} else if ctx.Err() == nil {
			log.Warn("reading the launching instance's node", "error", err)
		}
		if first {
			log.Debug("launching instance's node not Ready yet; waiting", "node_state", state)
		}
		select {
		case <-wctx.Done():
			return retry(fmt.Sprintf("node of launching instance %s %s in cluster %s when the invocation budget ran "+
				"out; launch hook heartbeated, waiting again on redelivery", inst.ID, state, inst.Cluster))
		case <-tick.C():
		}
	}
}

// nodeReady reports whether the node's Ready condition is True.
func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
