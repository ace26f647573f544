package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/fleet"
)

// The sweep's schedule rule and its margin in the restore scenario: short,
// so the scenario waits seconds, not the default 10 minutes, for a threat
// to be over.
const (
	sweepRule   = "arn:aws:events:" + awsfake.Region + ":" + fleet.Account + ":rule/drainpipe-sweep"
	sweepMargin = 5 * time.Second
)

// rebootCode is the Health code of the scheduled reboot the scenario
// announces; rebootEvent is EC2's event for it.
const (
	rebootCode  = "AWS_EC2_INSTANCE_REBOOT_MAINTENANCE_SCHEDULED"
	rebootEvent = "instance-event-0c4a05000000000a1"
)

// 11. Every restore notice dropped: beside the wave, two instances are
// stopped and one gets a scheduled reboot, each announced; then they run
// again and the reboot completes, but no running or closed notice ever
// comes. The Spot instances are never taken and the hooked ones are
// terminated. The sweep must give every node back within one sweep of its
// threat ending (by the margin) and never before: a sweep before that
// leaves them; the hooked nodes go with their instances (out of service).
func restoresDropped() Scenario {
	spec := DefaultSpec()
	spec.Nodes, spec.SpotShare, spec.HookShare = 12, 0.2, 0.25 // 2 Spot, 3 hooked, 7 others: 3 for the restores
	fn := DefaultFunction()
	fn.Env = append(fn.Env, "DRAINPIPE_SWEEP_RULE="+sweepRule, "DRAINPIPE_SWEEP_MARGIN="+sweepMargin.String())
	return Scenario{Name: "restore-notices-dropped", Spec: spec, Function: fn, Fault: dropRestores}
}

// restoreScene is the nodes of the restore scenario by part.
type restoreScene struct {
	stopped   []fleet.Node // stopped, then running: their running notice lost
	rebooted  fleet.Node   // scheduled reboot, completed: its closed notice lost
	spot      []fleet.Node // EC2 never takes them
	hooked    []fleet.Node // terminated once their hooks complete
	rebootAt  time.Time
	spotUntil time.Time // no Spot node may be given back before this
}

func dropRestores(ctx context.Context, r *Rig) error {
	start := time.Now()
	sc := restoreScene{rebootAt: start.Add(40 * time.Second).Truncate(time.Second),
		spotUntil: start.Add(SpotWindow - 2*time.Second)} // the warnings were sent just before
	var others []fleet.Node
	for _, n := range r.Fleet.Nodes {
		switch {
		case n.Spot:
			sc.spot = append(sc.spot, n)
		case n.Hook != nil:
			sc.hooked = append(sc.hooked, n)
		default:
			others = append(others, n)
		}
	}
	if len(others) < 4 {
		return fmt.Errorf("the fleet has %d nodes outside the wave, want at least 4", len(others))
	}
	sc.stopped, sc.rebooted = others[:2], others[2]
	if err := sc.announce(r); err != nil {
		return err
	}
	if err := r.WaitSettled(ctx); err != nil {
		return fmt.Errorf("the wave and the notices: %w", err)
	}
	var problems []error
	check := func(sweep string, nodes []fleet.Node, wantBack bool, why string) {
		problems = append(problems, r.checkBack(ctx, sweep, nodes, wantBack, why)...)
	}

	// 1. Nothing is over yet: stopped, reboot ahead or not completed.
	if err := r.sweep(ctx, "sweep 1"); err != nil {
		return err
	}
	check("sweep 1", append(slices.Clone(sc.stopped), sc.rebooted), false, "its threat is live")
	if time.Now().Before(sc.spotUntil) {
		check("sweep 1", sc.spot, false, "its Spot deadline is ahead")
	}

	// 2. The stopped instances run again, the reboot completes, Auto
	// Scaling terminates the hooked instances; no notice of any of it.
	for _, n := range sc.hooked {
		r.Fake.SetInstanceState(n.InstanceID, "terminated")
	}
	for _, n := range sc.stopped {
		r.Fake.SetInstanceState(n.InstanceID, "running")
	}
	r.Fake.AddScheduledEvents(awsfake.ScheduledEvent{InstanceID: sc.rebooted.InstanceID, ID: rebootEvent, Code: "instance-reboot",
		Description: "[Completed] Scheduled reboot", NotBefore: sc.rebootAt})
	r.Note("restore notices dropped: %d running, 1 Health closed; hooked instances terminated", len(sc.stopped))
	waitUntil(ctx, later(time.Now(), sc.rebootAt).Add(sweepMargin+time.Second)) // the margin, not a synchronisation
	sent := time.Now()
	if err := r.sweep(ctx, "sweep 2"); err != nil {
		return err
	}
	check("sweep 2", append(slices.Clone(sc.stopped), sc.rebooted), true, "its threat ended a margin ago")
	problems = append(problems, r.checkOutOfService(ctx, sc.hooked)...)
	if time.Now().Before(sc.spotUntil) {
		check("sweep 2", sc.spot, false, "its Spot deadline is ahead")
	}

	// 3. Past the Spot deadline by the margin, the instances still run.
	waitUntil(ctx, later(sent, start.Add(SpotWindow+sweepMargin+time.Second)))
	if err := r.sweep(ctx, "sweep 3"); err != nil {
		return err
	}
	check("sweep 3", sc.spot, true, "EC2 did not take it by its deadline")
	check("sweep 3", sc.hooked, false, "its instance is terminated")
	return errors.Join(problems...)
}

// announce sends the stopped and scheduled-reboot notices, as EventBridge
// would, with EC2 agreeing.
func (sc restoreScene) announce(r *Rig) error {
	for _, n := range sc.stopped {
		r.Fake.SetInstanceState(n.InstanceID, "stopped")
		if err := r.send(stateChange(n.InstanceID, "stopped")); err != nil {
			return err
		}
	}
	r.Fake.AddScheduledEvents(awsfake.ScheduledEvent{InstanceID: sc.rebooted.InstanceID, ID: rebootEvent, Code: "instance-reboot",
		Description: "Scheduled reboot", NotBefore: sc.rebootAt})
	return r.send(healthReboot(sc.rebooted.InstanceID, sc.rebootAt))
}

// sweep sends the schedule rule's event and waits until every message is
// settled; a sweep that ends in the dead-letter queue is reported by Run.
func (r *Rig) sweep(ctx context.Context, name string) error {
	if err := r.send(envelope("Scheduled Event", "aws.events", []string{sweepRule}, map[string]any{})); err != nil {
		return err
	}
	if err := r.WaitSettled(ctx); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	repairs := 0
	for _, l := range r.Deployment.Mapping.Logs() {
		if strings.Contains(l, `"msg":"sweep repaired a node"`) {
			repairs++
		}
	}
	r.Note("%s settled; %d repairs logged so far", name, repairs)
	return nil
}

func (r *Rig) send(body []byte) error {
	if _, err := r.Fake.SendMessage(r.Deployment.Queue, string(body)); err != nil {
		return fmt.Errorf("enqueueing: %w", err)
	}
	return nil
}

// checkBack reports each node that is given back (schedulable, without
// the held label) when it should not be, or held when it should be back.
func (r *Rig) checkBack(ctx context.Context, sweep string, nodes []fleet.Node, wantBack bool, why string) []error {
	var out []error
	for _, n := range nodes {
		node, err := r.Admin.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
		if err != nil {
			out = append(out, fmt.Errorf("%s: reading node %s: %w", sweep, n.Name, err))
			continue
		}
		back := !node.Spec.Unschedulable && node.Labels["drainpipe.dev/held"] == ""
		switch {
		case back && !wantBack:
			out = append(out, fmt.Errorf("%s: node %s given back early (%s)", sweep, n.Name, why))
		case !back && wantBack:
			out = append(out, fmt.Errorf("%s: node %s still held (unschedulable %v, held %q) though %s",
				sweep, n.Name, node.Spec.Unschedulable, node.Labels["drainpipe.dev/held"], why))
		}
	}
	return out
}

// checkOutOfService reports each node not tainted out of service.
func (r *Rig) checkOutOfService(ctx context.Context, nodes []fleet.Node) []error {
	var out []error
	for _, n := range nodes {
		node, err := r.Admin.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
		if err != nil {
			out = append(out, fmt.Errorf("reading node %s: %w", n.Name, err))
			continue
		}
		if !slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.Key == "node.kubernetes.io/out-of-service" }) {
			out = append(out, fmt.Errorf("node %s of a terminated instance not tainted out of service", n.Name))
		}
	}
	return out
}

func waitUntil(ctx context.Context, at time.Time) {
	select {
	case <-ctx.Done():
	case <-time.After(time.Until(at)):
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// envelope is an EventBridge event from this account and region.
func envelope(detailType, source string, resources []string, detail map[string]any) []byte {
	b, _ := json.Marshal(map[string]any{ // maps of strings always encode
		"version": "0", "id": fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", rand.Uint32(), rand.Uint32()&0xffff,
			rand.Uint32()&0xfff, rand.Uint32()&0xfff, rand.Uint64()&0xffffffffffff),
		"detail-type": detailType, "source": source, "account": fleet.Account, "region": awsfake.Region,
		"time": time.Now().UTC().Format(time.RFC3339), "resources": resources, "detail": detail,
	})
	return b
}

func stateChange(id, state string) []byte {
	return envelope("EC2 Instance State-change Notification", "aws.ec2",
		[]string{"arn:aws:ec2:" + awsfake.Region + ":" + fleet.Account + ":instance/" + id},
		map[string]any{"instance-id": id, "state": state})
}

func healthReboot(id string, start time.Time) []byte {
	return envelope("AWS Health Event", "aws.health", []string{id}, map[string]any{
		"eventArn": "arn:aws:health:" + awsfake.Region + "::event/EC2/" + rebootCode + "/" + rebootCode + "_CHAOS",
		"service":  "EC2", "eventTypeCode": rebootCode, "eventTypeCategory": "scheduledChange", "statusCode": "upcoming",
		"startTime": start.UTC().Format(http.TimeFormat), "affectedEntities": []any{map[string]any{"entityValue": id}},
	})
}
