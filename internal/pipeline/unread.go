package pipeline

import (
	"context"
	"log/slog"

	corev1 "k8s.io/api/core/v1"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/instance"
)

// UnreadCordoner is a Drainer that can cordon a node it has not read
// (*drain.Drainer, and the drainers wrapping one): without it, every
// cordon reads its node first.
type UnreadCordoner interface {
	CordonUntouched(ctx context.Context, req drain.Request, u drain.Untouched, log *slog.Logger) (*corev1.Node, error)
}

// cordonUnread cordons the node of a first notice in one request when the
// node is as Drainpipe has never touched it, under the instance's private
// DNS name: a wave's notices find their nodes so, and a read before the
// write doubled their round trips in the control plane's busiest second.
// It returns the node as patched, or nil when the node must be found and
// read first (then nothing was changed). The patch's tests hold every
// check the read path makes before a cordon of such a task: the
// instance's providerID, and no label of a node left to others.
func (a *Actor) cordonUnread(ctx context.Context, d Drainer, t handler.Task, p event.Interruption, inst instance.Instance, req drain.Request, log *slog.Logger) *corev1.Node {
	c, ok := d.(UnreadCordoner)
	if !ok || !a.unreadable(t, p, inst) {
		return nil
	}
	var absent []string
	if a.cfg.SkipKarpenter {
		absent = append(absent, karpenterLabels...)
	}
	if a.cfg.SkipAutoMode {
		absent = append(absent, drain.AutoModeLabel)
	}
	req.Node = inst.PrivateDNSName
	node, err := c.CordonUntouched(ctx, req, drain.Untouched{ProviderID: providerID(inst), Absent: absent}, log)
	if err != nil {
		log.Debug("node not cordoned unread; finding and reading it", "error", err.Error())
		return nil
	}
	return node
}

// unreadable reports a task whose node may be cordoned unread: a first
// delivery for a running instance, with no check that needs the node
// before the cordon (a scheduled change's record of being acted on, a
// group's drain limit, a dry run).
func (a *Actor) unreadable(t handler.Task, p event.Interruption, inst instance.Instance) bool {
	return !a.cfg.DryRun && a.groups == nil && t.ReceiveCount <= 1 && inst.State == "running" &&
		inst.PrivateDNSName != "" && inst.AvailabilityZone != "" && p.Kind != event.KindScheduledChange
}

// providerID is the spec.providerID of the instance's node on EKS.
func providerID(inst instance.Instance) string {
	return "aws:///" + inst.AvailabilityZone + "/" + inst.ID
}
