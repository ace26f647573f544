package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/instance"
	"github.com/drainpipe/drainpipe/internal/nodemap"
	"github.com/drainpipe/drainpipe/internal/restore"
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

// find finds n's node and sets n.node: it cordons it unread when it can
// (cordoned is then true), else finds and reads it, then runs before's
// checks. ok is false when r is the result.
func (n *onNode) find(ctx context.Context, d Drainer, req drain.Request, log *slog.Logger) (read *corev1.Node, cordoned bool, r handler.Result, ok bool) {
	a := n.a
	if read = a.cordonUnread(ctx, d, n.task, n.p, n.inst, req, log); read != nil {
		n.node, cordoned = read.Name, true
	} else {
		var err error
		n.node, read, err = a.locate(ctx, n.client, n.inst)
		if errors.Is(err, nodemap.ErrNotFound) {
			return nil, false, done(fmt.Sprintf("no node of cluster %s runs on the instance: nothing to drain", n.inst.Cluster)), false
		}
		if err != nil {
			return nil, false, retry(fmt.Sprintf("finding the node in cluster %s: %s", n.inst.Cluster, kubeReason(err))), false
		}
	}
	if r, stop := n.before(ctx, read); stop {
		return read, cordoned, r, false
	}
	return read, cordoned, handler.Result{}, true
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
	if a.cfg.RebalanceHold > 0 && n.task.ReceiveCount > 1 && restore.RebalanceOnly(n.task.Interruptions) {
		why, err := restore.Overtaken(ctx, n.client, node, n.p)
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
// rebalance-only cordon (restore.Restorer.Hold) once the drain or cordon is done.
func (n onNode) after(ctx context.Context, r handler.Result) handler.Result {
	if r.Status != handler.StatusDone {
		return r
	}
	a := n.a
	a.recordScheduled(ctx, n.client, n.node, n.p, n.log)
	if n.inst.State == "stopped" && a.cfg.OutOfService {
		return n.outOfService(ctx, r)
	}
	if a.cfg.RebalanceHold > 0 && restore.RebalanceOnly(n.task.Interruptions) && !a.cfg.DryRun {
		return fromRestore(a.restorer.Hold(ctx, n.client, restore.Held{Node: n.node, Event: n.p, State: n.inst.State,
			ReceiveCount: n.task.ReceiveCount, Reason: r.Reason}, n.log))
	}
	return r
}
