package sweep

import (
	"context"
	"fmt"
	"slices"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/instance"
	"github.com/drainpipe/drainpipe/internal/policy"
)

// actedCodes are the scheduled events that stop, reboot or retire the
// instance itself: the ones a Health notice would drain for. A
// system-maintenance event is cordon-at-most and left to its notice.
var actedCodes = []string{"instance-stop", "instance-retirement", "instance-reboot", "system-reboot"}

// scheduled acts on the scheduled events no Health notice brought: each
// becomes a scheduled-change task for the pipeline, as its notice would
// have, unless the node records it as acted on (drain.AnnotationActed: the
// pipeline writes it when it finishes such a drain, whichever source
// brought it) or is held for another scheduled change.
func (s *Sweeper) scheduled(ctx context.Context, clients map[string]kubernetes.Interface, heldBy map[string]held,
	events []instance.ScheduledEvent, insts map[string]instance.Instance, rep *Report) {
	for _, e := range events {
		inst, ok := insts[e.InstanceID]
		client, served := clients[inst.Cluster]
		if !ok || !served || !slices.Contains(actedCodes, e.Code) {
			continue
		}
		node := heldBy[e.InstanceID].node
		if node == nil {
			n, err := s.d.NodeOf(ctx, client, inst)
			if err != nil {
				continue // no node runs on it: nothing to drain
			}
			node = n
		}
		m := drain.ReadMarks(node)
		if drain.Acted(node, e.Code, e.NotBefore) || s.cfg.ScheduledAction == policy.ActionNone {
			continue
		}
		if m.Kind == string(event.KindScheduledChange) && m.EventID != e.ID {
			continue // its Health notice is being acted on
		}
		now := s.d.Now()
		in := event.Interruption{Kind: event.KindScheduledChange, Instances: []string{e.InstanceID}, EventID: e.ID,
			Time: now, Deadline: e.NotBefore, ScheduledCode: e.Code,
			Summary: fmt.Sprintf("EC2 scheduled event %s %s from %s, found by the sweep (no Health notice came)",
				e.Code, e.ID, e.NotBefore.UTC().Format(time.RFC3339))}
		t := handler.Task{InstanceID: e.InstanceID, Action: s.cfg.ScheduledAction, Interruptions: []event.Interruption{in},
			ReceiveCount: 1}
		r := s.d.Actor.Act(ctx, t)
		log := s.d.Log.With("cluster", inst.Cluster, "node", node.Name, "instance_id", e.InstanceID, "event_id", e.ID)
		switch r.Status {
		case handler.StatusRetry:
			rep.Pending = append(rep.Pending, fmt.Sprintf("scheduled event %s on %s: %s", e.ID, node.Name, r.Reason))
			log.WarnContext(ctx, "sweep acting on a scheduled event no notice brought: unfinished", "reason", r.Reason)
		case handler.StatusDone:
			log.WarnContext(ctx, "sweep repaired a node", "repair", RepairScheduled, "reason", in.Summary+": "+r.Reason)
			rep.Repairs = append(rep.Repairs, Repair{What: RepairScheduled, Cluster: inst.Cluster, Node: node.Name,
				Instance: e.InstanceID, Reason: in.Summary + ": " + r.Reason})
		default:
			log.InfoContext(ctx, "sweep: scheduled event left", "reason", r.Reason)
			rep.Left = append(rep.Left, Left{Cluster: inst.Cluster, Node: node.Name, Reason: r.Reason})
		}
	}
}
