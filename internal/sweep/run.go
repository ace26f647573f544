package sweep

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/instance"
)

// listPage bounds one LIST of held nodes.
const listPage = 500

// held is one node Drainpipe holds, as the sweep's LIST read it.
type held struct {
	cluster  string
	client   kubernetes.Interface
	node     *corev1.Node
	instance string // from its providerID; empty when it names none
	life     life   // for a terminate lifecycle hold: how long its action can last
}

// Sweep runs one sweep. It never stops at the first failure: what could
// not be checked is reported in Errors and the rest is still repaired.
func (s *Sweeper) Sweep(ctx context.Context) Report {
	rep := Report{Repairs: []Repair{}, Left: []Left{}, DryRun: s.cfg.DryRun}
	clients := map[string]kubernetes.Interface{}
	var nodes []held
	for _, c := range s.cfg.Clusters {
		client, err := s.d.Clients.Client(ctx, c)
		if err != nil {
			rep.Errors = append(rep.Errors, fmt.Sprintf("connecting to cluster %s: %v", c, err))
			continue
		}
		clients[c] = client
		found, err := listHeld(ctx, client, c)
		if err != nil {
			rep.Errors = append(rep.Errors, err.Error())
		}
		nodes = append(nodes, found...)
	}
	events, err := s.d.EC2.Scheduled(ctx)
	if err != nil {
		rep.Errors = append(rep.Errors, err.Error())
	}
	var ids []string
	for _, h := range nodes {
		if h.instance != "" {
			ids = append(ids, h.instance)
		}
	}
	for _, e := range events {
		ids = append(ids, e.InstanceID)
	}
	insts := map[string]instance.Instance{}
	if ids = slices.Compact(slices.Sorted(slices.Values(ids))); len(ids) > 0 {
		if insts, err = s.d.EC2.Describe(ctx, ids); err != nil {
			// Nothing can be judged without EC2's word.
			rep.Errors = append(rep.Errors, fmt.Sprintf("describing %d instances: %v", len(ids), err))
			return rep
		}
	}
	byEvent := map[string][]instance.ScheduledEvent{}
	for _, e := range events {
		byEvent[e.InstanceID] = append(byEvent[e.InstanceID], e)
	}
	heldBy := map[string]held{}
	lives := map[string]life{}
	for _, h := range nodes {
		rep.Checked++
		inst, found := insts[h.instance]
		if h.instance != "" {
			heldBy[h.instance] = h
		}
		if found && drain.ReadMarks(h.node).Holds.Kinds(string(event.KindASGLifecycle)) {
			h.life = s.actionLife(ctx, inst, lives)
		}
		s.repair(ctx, h, s.judge(h, inst, found, byEvent[h.instance]), &rep)
	}
	s.stopped(ctx, clients, heldBy, &rep)
	s.scheduled(ctx, clients, heldBy, events, insts, &rep)
	return rep
}

// listHeld lists a cluster's held nodes, page by page.
func listHeld(ctx context.Context, client kubernetes.Interface, cluster string) ([]held, error) {
	var out []held
	opts := metav1.ListOptions{LabelSelector: drain.HeldSelector, Limit: listPage}
	for {
		list, err := client.CoreV1().Nodes().List(ctx, opts)
		if err != nil {
			return out, fmt.Errorf("listing held nodes of cluster %s: %w", cluster, err)
		}
		for i := range list.Items {
			n := &list.Items[i]
			out = append(out, held{cluster: cluster, client: client, node: n, instance: instanceOf(n)})
		}
		if list.Continue == "" {
			return out, nil
		}
		opts.Continue = list.Continue
	}
}

// instanceOf reads the instance ID from a node's providerID
// (aws:///<zone>/<instance-id>); empty when it names none.
func instanceOf(n *corev1.Node) string {
	id := n.Spec.ProviderID[strings.LastIndex(n.Spec.ProviderID, "/")+1:]
	if !event.ValidInstanceID(id) {
		return ""
	}
	return id
}

// repair carries a verdict out and logs it.
func (s *Sweeper) repair(ctx context.Context, h held, v verdict, rep *Report) {
	log := s.d.Log.With("cluster", h.cluster, "node", h.node.Name, "instance_id", h.instance)
	r := Repair{What: v.what, Cluster: h.cluster, Node: h.node.Name, Instance: h.instance, Reason: v.why}
	switch {
	case v.what == "":
		log.DebugContext(ctx, "sweep: held node left as it is", "reason", v.why)
		rep.Left = append(rep.Left, Left{Cluster: h.cluster, Node: h.node.Name, Reason: v.why})
		return
	case s.cfg.DryRun:
		log.InfoContext(ctx, "sweep: dry run: would repair", "repair", v.what, "reason", v.why)
		rep.Repairs = append(rep.Repairs, r)
		return
	case v.what == RepairOutOfService:
		if _, err := drain.MarkOutOfService(ctx, h.client, h.node.Name, s.d.Now()); err != nil {
			rep.Errors = append(rep.Errors, fmt.Sprintf("tainting node %s out of service: %v", h.node.Name, err))
			return
		}
	default: // given back, exactly as a restore would, matched on the hold judged
		g, err := drain.UncordonRead(ctx, h.client, h.node, v.match)
		if err != nil {
			rep.Errors = append(rep.Errors, fmt.Sprintf("giving node %s back: %v", h.node.Name, err))
			return
		}
		if !g.Back && len(g.Ended) == 0 {
			rep.Left = append(rep.Left, Left{Cluster: h.cluster, Node: h.node.Name, Reason: g.Reason})
			return
		}
		if !g.Back {
			r.What = RepairHoldEnded
		}
		r.Reason += fmt.Sprintf(" (undid %v)", g.Changed)
	}
	log.WarnContext(ctx, "sweep repaired a node", "repair", v.what, "reason", r.Reason)
	rep.Repairs = append(rep.Repairs, r)
}

// stopped taints out of service the nodes of stopped instances that no
// notice reached (Drainpipe does not hold them): the state change would
// have. Held nodes were judged already.
func (s *Sweeper) stopped(ctx context.Context, clients map[string]kubernetes.Interface, heldBy map[string]held, rep *Report) {
	if !s.cfg.OutOfService {
		return
	}
	found, err := s.d.EC2.Stopped(ctx)
	if err != nil {
		rep.Errors = append(rep.Errors, err.Error())
		return
	}
	for _, id := range slices.Sorted(maps.Keys(found)) {
		inst := found[id]
		client, ok := clients[inst.Cluster]
		if _, isHeld := heldBy[id]; isHeld || !ok {
			continue
		}
		node, err := s.d.NodeOf(ctx, client, inst)
		if err != nil {
			continue // no node left (or none to find): nothing to repair
		}
		h := held{cluster: inst.Cluster, client: client, node: node, instance: id}
		if m := drain.ReadMarks(node); m.OutOfSvc || hasOutOfService(node) || m.Karpenter {
			continue
		}
		s.repair(ctx, h, verdict{what: RepairOutOfService,
			why: "instance is stopped and no notice reached Drainpipe: node tainted out of service so its volumes detach"}, rep)
	}
}

func hasOutOfService(n *corev1.Node) bool {
	return slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == drain.OutOfServiceTaintKey })
}
