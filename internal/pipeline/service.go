package pipeline

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/instance"
)

// karpenterLabels are the labels of Karpenter's nodes, v1 and before: the
// read path skips a node with any, the unread cordon tests for none.
var karpenterLabels = []string{drain.KarpenterNodePoolLabel, drain.KarpenterProvisionerLabel}

// locate finds the node on inst: with a NodeGetter, as read (the cold
// cordon path's every read is a round trip, and the checks before the
// drain need its labels); otherwise by name alone, read nil.
func (a *Actor) locate(ctx context.Context, client kubernetes.Interface, inst instance.Instance) (string, *corev1.Node, error) {
	if a.nodeOf == nil {
		name, err := a.findNode(ctx, client, inst)
		return name, nil, err
	}
	node, err := a.nodeOf(ctx, client, inst)
	if err != nil {
		return "", nil, err
	}
	return node.Name, node, nil
}

// leftToOthers says why a node is left to another controller: an EKS
// Auto Mode node with Config.SkipAutoMode, or a Karpenter node (v1 or
// older) with Config.SkipKarpenter; empty when Drainpipe handles it.
// read is the node as found, nil when it was not read: then it is.
func (a *Actor) leftToOthers(ctx context.Context, client kubernetes.Interface, name string, read *corev1.Node) (string, error) {
	if !a.cfg.SkipKarpenter && !a.cfg.SkipAutoMode {
		return "", nil // nothing to read
	}
	node := read
	if node == nil {
		var err error
		if node, err = client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{}); err != nil {
			return "", fmt.Errorf("getting node %s: %w", name, err)
		}
	}
	labels := node.Labels
	if a.cfg.SkipAutoMode && labels[drain.AutoModeLabel] == drain.AutoModeCompute {
		return fmt.Sprintf("node %s is an EKS Auto Mode node (%s=%s) and DRAINPIPE_AUTO_MODE_NODES=skip: "+
			"EKS handles its interruptions", name, drain.AutoModeLabel, drain.AutoModeCompute), nil
	}
	if !a.cfg.SkipKarpenter {
		return "", nil
	}
	for _, label := range karpenterLabels {
		if pool, ok := labels[label]; ok {
			return fmt.Sprintf("node %s belongs to Karpenter (%s=%q) and DRAINPIPE_KARPENTER_NODES=skip: "+
				"Karpenter's interruption handling takes care of it", name, label, pool), nil
		}
	}
	return "", nil
}

// onNode is a task's work on the node it found: the checks before the
// drain and what follows it. log names the cluster and node once the
// drain is under way.
type onNode struct {
	a      *Actor
	client kubernetes.Interface
	task   handler.Task
	p      event.Interruption // the task's primary interruption
	inst   instance.Instance
	node   string
	log    *slog.Logger
}

// outOfService taints the node of an instance EC2 reports stopped or
// terminated (Config.OutOfService), so its pods and volumes move although
// its kubelet is gone. A failure retries the record.
func (n onNode) outOfService(ctx context.Context, r handler.Result) handler.Result {
	if n.a.cfg.DryRun {
		n.log.Info("dry run: would taint node out of service", "state", n.inst.State)
		return r
	}
	wrote, err := drain.MarkOutOfService(ctx, n.client, n.node, n.a.clock.Now())
	if err != nil {
		return retry(fmt.Sprintf("tainting node %s out of service: %v", n.node, err))
	}
	if wrote {
		n.log.Info("node tainted out of service", "taint", drain.OutOfServiceTaintKey, "state", n.inst.State)
		r.Reason += fmt.Sprintf("; instance is %s: node tainted %s so its volumes detach", n.inst.State, drain.OutOfServiceTaintKey)
	}
	return r
}

// rebalanceOnly reports whether a task holds nothing but rebalance
// recommendations: only those are given back after a hold.
func rebalanceOnly(t handler.Task) bool {
	for _, in := range t.Interruptions {
		if in.Kind != event.KindRebalanceRecommendation {
			return false
		}
	}
	return len(t.Interruptions) > 0
}

// overtaken says, on a rebalance redelivery, whether the node is now held
// for something else (an interruption followed, or a newer
// recommendation): then this message is done and must not re-cordon the
// node under its own kind.
func (n onNode) overtaken(ctx context.Context) (string, error) {
	node, err := n.client.CoreV1().Nodes().Get(ctx, n.node, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("getting node %s: %w", n.node, err)
	}
	m := drain.ReadMarks(node)
	if m.Kind != "" && (m.Kind != string(n.p.Kind) || m.EventID != n.p.EventID) {
		return fmt.Sprintf("node %s is now held for %s (event %s): the rebalance hold of event %s ends here",
			n.node, m.Kind, m.EventID, n.p.EventID), nil
	}
	return "", nil
}

// hold keeps a rebalance-only cordon until Config.RebalanceHold has passed
// since the node was first cordoned, by asking for the message back then
// (handler.Result.HoldFor: its visibility timeout). When it comes back and
// no interruption followed, the node is given back if EC2 still reports
// the instance running. On the queue's last delivery the node is given
// back early rather than held for good.
func (n onNode) hold(ctx context.Context, r handler.Result) handler.Result {
	a, name := n.a, n.node
	node, err := n.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return retry(fmt.Sprintf("getting node %s: %v", name, err))
	}
	since, err := time.Parse(time.RFC3339, drain.ReadMarks(node).Since)
	if err != nil {
		since = n.p.Time
	}
	now := a.clock.Now()
	// The mark is written on the drainer's clock, in whole seconds; one
	// ahead of ours (another environment's, a second boundary) must not
	// stretch the hold past RebalanceHold from now.
	if since.After(now) {
		since = now
	}
	end := since.Add(a.cfg.RebalanceHold)
	if n.inst.State != "running" {
		return done(fmt.Sprintf("%s; instance is %s: node %s stays cordoned", r.Reason, n.inst.State, name))
	}
	if now.Before(end) && n.task.ReceiveCount < a.cfg.MaxReceiveCount {
		return handler.Result{Status: handler.StatusRetry, HoldFor: end.Sub(now), Node: name,
			Reason: fmt.Sprintf("%s; holding the rebalance cordon until %s (DRAINPIPE_REBALANCE_HOLD %s), then giving it back "+
				"if no interruption followed", r.Reason, end.UTC().Format(time.RFC3339), a.cfg.RebalanceHold)}
	}
	if now.Before(end) {
		n.log.Warn("last delivery before the rebalance hold ends: giving the node back early", "hold_ends", end)
	}
	return a.giveBack(ctx, n.client, node, drain.Match{Kinds: []string{string(event.KindRebalanceRecommendation)},
		EventID: n.p.EventID}, "rebalance hold over, no interruption followed", n.log)
}

// before runs the checks that need the node's name before the cordon: a
// terminated instance's node is only tainted out of service, Karpenter's
// nodes may be left to it, and a rebalance redelivery must not re-cordon a
// node an interruption has since taken. read is the node as found (nil
// when it was not read); stop is true when r is the result.
func (n onNode) before(ctx context.Context, read *corev1.Node) (r handler.Result, stop bool) {
	a, node := n.a, n.node
	if n.inst.State == "terminated" { // only with Config.OutOfService
		r = done(fmt.Sprintf("instance is terminated but node %s remains", node))
		r = n.outOfService(ctx, r)
		r.Node = node
		return r, true
	}
	why, err := a.leftToOthers(ctx, n.client, node, read)
	if err != nil {
		return retry(err.Error()), true
	}
	if why != "" {
		return handler.Result{Status: handler.StatusIgnored, Reason: why, Node: node}, true
	}
	why, err = scheduledActed(ctx, n.client, node, n.p)
	if err != nil {
		return retry(err.Error()), true
	}
	if why != "" {
		return handler.Result{Status: handler.StatusIgnored, Reason: why, Node: node}, true
	}
	if a.cfg.RebalanceHold > 0 && n.task.ReceiveCount > 1 && rebalanceOnly(n.task) {
		why, err := n.overtaken(ctx)
		if err != nil {
			return retry(err.Error()), true
		}
		if why != "" {
			return handler.Result{Status: handler.StatusDone, Reason: why, Node: node}, true
		}
	}
	return handler.Result{}, false
}

// after taints a stopped instance's node out of service and holds a
// rebalance-only cordon (see hold) once the drain or cordon is done.
func (n onNode) after(ctx context.Context, r handler.Result) handler.Result {
	if r.Status != handler.StatusDone {
		return r
	}
	a := n.a
	a.recordScheduled(ctx, n.client, n.node, n.p, n.log)
	if n.inst.State == "stopped" && a.cfg.OutOfService {
		return n.outOfService(ctx, r)
	}
	if a.cfg.RebalanceHold > 0 && rebalanceOnly(n.task) && !a.cfg.DryRun {
		return n.hold(ctx, r)
	}
	return r
}
