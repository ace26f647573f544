package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/drainpipe/drainpipe/internal/group"
	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// hookGroup is the Auto Scaling group of live.pendingHook.
const hookGroup = "e2e-asg"

// groupEnv turns the group limit on with its Leases in the test's
// namespace (each test its own slots).
func (l *live) groupEnv(max string) []string {
	return []string{"DRAINPIPE_GROUP_MAX_DRAINING=" + max, "DRAINPIPE_GROUP_NAMESPACE=" + l.k8s.Namespace}
}

// inGroup tags a node's instance as a member of Auto Scaling group asg.
func (l *live) inGroup(n *corev1.Node, asg string) {
	l.aws.AddInstances(awsfake.Instance{
		ID: fixture.InstanceID(n), PrivateDNSName: n.Name, AvailabilityZone: n.Labels[corev1.LabelTopologyZone],
		Lifecycle: "spot", LaunchTime: time.Now().Add(-time.Hour),
		Tags: map[string]string{"eks:cluster-name": served, "aws:autoscaling:groupName": asg},
	})
}

// slotLease creates slot i of group asg/name as another invocation left
// it: held by holder, last renewed at renewed.
func (l *live) slotLease(ctx context.Context, t *testing.T, name string, i int, holder string, renewed time.Time) {
	t.Helper()
	g := group.Group{Name: "asg/" + name}
	at, secs := metav1.NewMicroTime(renewed), int32(60)
	if _, err := l.k8s.Client.CoordinationV1().Leases(l.k8s.Namespace).Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: g.SlotName(i), Labels: map[string]string{group.HashLabel: g.Hash()}},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &secs, AcquireTime: &at, RenewTime: &at},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// leases lists the slot Leases left in the test's namespace.
func (l *live) leases(ctx context.Context, t *testing.T) []coordinationv1.Lease {
	t.Helper()
	list, err := l.k8s.Client.CoordinationV1().Leases(l.k8s.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// An instance refresh of six nodes, each running two pods of a workload
// whose budget lets one pod go at a time: with DRAINPIPE_GROUP_MAX_DRAINING=2
// every hook completes on an empty node, and a watch on the pods never
// sees more than two nodes evicting at once (a node evicts from its first
// pod deleted until its last pod is gone).
func TestLiveInstanceRefreshDrainsWithinTheGroupLimit(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute) // six nodes, in three rounds
	defer cancel()
	l := newLive(t)
	old := l.nodes(ctx, 6, served)
	oldNames := map[string]bool{}
	for i, n := range old {
		oldNames[n.Name] = true
		l.k8s.Deployment(ctx, fmt.Sprintf("web-%d", i), 2, fixture.OnNode(n.Name), fixture.Labels(map[string]string{"tier": "web"}))
	}
	l.k8s.PDB(ctx, "web", map[string]string{"tier": "web"}, fixture.MaxUnavailable(1))
	l.nodes(ctx, 3, served) // the refresh's new instances, where the pods go
	var msgs []message
	var hooks []awsfake.LifecycleAction
	for i, n := range old {
		h := l.pendingHook(n, fmt.Sprintf("7a1e7b9c-0000-4000-8000-0000000027%02d", i))
		hooks = append(hooks, h)
		msgs = append(msgs, message{id: fmt.Sprintf("refresh-%d", i), body: terminateHook(t, h)})
	}
	l.start(t, l.groupEnv("2")...)
	list, err := l.k8s.Client.CoreV1().Pods(l.k8s.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := l.k8s.Client.CoreV1().Pods(l.k8s.Namespace).Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	history := make(chan []watch.Event)
	go func() {
		var evs []watch.Event
		for ev := range w.ResultChan() {
			evs = append(evs, ev)
		}
		history <- evs
	}()

	// SQS brings back what is retried; the last delivery (5) would drain
	// past the limit, so the refresh must be over by the fourth.
	for rc := 1; len(msgs) > 0 && rc <= 4; rc++ {
		for i := range msgs {
			msgs[i].receiveCount = rc
		}
		res := l.invoke(ctx, t, 90*time.Second, msgs...)
		failed := failedIDs(batchResponse(t, res.Body))
		msgs = slices.DeleteFunc(msgs, func(m message) bool { return !slices.Contains(failed, m.id) })
	}
	w.Stop()
	evs := <-history

	if len(msgs) > 0 {
		t.Errorf("records still retried after four deliveries: %v", msgs)
	}
	for _, n := range old {
		if got := l.podsOn(ctx, t, n.Name); len(got) != 0 {
			t.Errorf("pods left on %s: %v", n.Name, got)
		}
	}
	var want []awsfake.Completion
	for _, h := range hooks {
		want = append(want, awsfake.Completion{LifecycleAction: h, Result: "CONTINUE"})
	}
	byToken := func(a, b awsfake.Completion) int { return strings.Compare(a.Token, b.Token) }
	got := l.aws.Completed()
	slices.SortFunc(got, byToken)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("completed lifecycle actions (-want +got):\n%s", diff)
	}
	if most := evictingAtOnce(list.Items, evs, oldNames); most > 2 || most == 0 {
		t.Errorf("%d nodes evicting at once, want at most the limit of 2 (and some)", most)
	}
	if !logsContain(l.rt, "waiting for a drain slot") {
		t.Error("no node waited for a slot: the limit was never reached")
	}
	if left := l.leases(ctx, t); len(left) != 0 {
		t.Errorf("%d slot Leases left after every drain ended: %v", len(left), left)
	}
}

// evictingAtOnce replays a pod watch from the pods listed at its start
// and returns the most of nodes evicting at one instant: a node evicts
// from its first pod deleted (or marked for deletion) until its last pod
// is gone.
func evictingAtOnce(start []corev1.Pod, evs []watch.Event, nodes map[string]bool) int {
	on := map[string]map[string]bool{}
	place := func(p *corev1.Pod) {
		if on[p.Spec.NodeName] == nil {
			on[p.Spec.NodeName] = map[string]bool{}
		}
		on[p.Spec.NodeName][p.Name] = true
	}
	for i := range start {
		place(&start[i])
	}
	evicting := map[string]bool{}
	most := 0
	for _, ev := range evs {
		p, ok := ev.Object.(*corev1.Pod)
		if !ok || !nodes[p.Spec.NodeName] {
			continue
		}
		node := p.Spec.NodeName
		switch {
		case ev.Type == watch.Deleted:
			delete(on[node], p.Name)
			evicting[node] = true
		case p.DeletionTimestamp != nil:
			evicting[node] = true
		default:
			place(p)
		}
		most = max(most, len(evicting))
		if len(on[node]) == 0 {
			delete(evicting, node)
		}
	}
	return most
}

// With the group's only slot held, a Spot warning for a node of the group
// drains at once (its deadline cannot wait), while a terminate hook of the
// same group waits: cordoned, not evicted, hook heartbeated and pending,
// the record retried.
func TestLiveGroupLimitNeverHoldsBackASpotWarning(t *testing.T) {
	ctx := testContext(t)
	l := newLive(t)
	nodes := l.nodes(ctx, 2, served)
	spot, hooked := nodes[0], nodes[1]
	l.inGroup(spot, hookGroup)
	l.inGroup(hooked, hookGroup)
	// Bare pods on the Spot node: nothing replaces them, on the waiting
	// node or elsewhere.
	l.k8s.Pod(ctx, "spot-0", fixture.BoundTo(spot.Name))
	l.k8s.Pod(ctx, "spot-1", fixture.BoundTo(spot.Name))
	l.k8s.Deployment(ctx, "hooked", 2, fixture.OnNode(hooked.Name))
	l.slotLease(ctx, t, hookGroup, 0, "node-draining-elsewhere", time.Now())
	hook := l.pendingHook(hooked, "7a1e7b9c-0000-4000-8000-000000002710")
	// A 14 s function with a 2 s reserve: the hook waits about 5 s (the
	// hooks keep 5 s, the drain report 2 s), time for the Spot drain on a
	// loaded machine.
	l.start(t, append(l.groupEnv("1"), "DRAINPIPE_DEADLINE_RESERVE=2s")...)

	res := l.invoke(ctx, t, 14*time.Second,
		message{id: "spot", body: spotWarning(t, fixture.InstanceID(spot))},
		message{id: "hook", body: terminateHook(t, hook)})

	if diff := cmp.Diff([]string{"hook"}, failedIDs(batchResponse(t, res.Body))); diff != "" {
		t.Errorf("batch item failures (-want +got):\n%s", diff)
	}
	l.checkNode(ctx, t, spot.Name, true, 0)
	l.checkNode(ctx, t, hooked.Name, true, 2)
	if got := l.aws.Completed(); len(got) != 0 {
		t.Errorf("hook completed while its node waited: %+v", got)
	}
	if heartbeatsFor(l.aws, hook) == 0 {
		t.Error("the waiting node's hook was never heartbeated")
	}
	if !logsContain(l.rt, "waiting for a drain slot", "node-draining-elsewhere") {
		t.Error("no log says the hook waits for the slot node-draining-elsewhere holds")
	}
}

// A slot Lease left by an invocation that was killed (never renewed since)
// expires: the next delivery takes it over, drains, completes the hook and
// releases the slot.
func TestLiveGroupSlotOfAKilledInvocationExpires(t *testing.T) {
	l := drainPastHeldSlot(t, "killed-invocations-node", time.Now().Add(-10*time.Minute), 1,
		"7a1e7b9c-0000-4000-8000-000000002720")
	if !logsContain(l.rt, "taking over an expired drain slot", "killed-invocations-node") {
		t.Error("the takeover of the expired slot was not logged")
	}
	if left := l.leases(testContext(t), t); len(left) != 0 {
		t.Errorf("slot Leases left after the drain ended: %v", left)
	}
}

// On its record's last delivery a drain does not wait for a slot: its hook
// is about to be completed, and an instance terminated with its pods is
// worse than a group drained past its limit.
func TestLiveGroupLimitYieldsOnTheLastDelivery(t *testing.T) {
	l := drainPastHeldSlot(t, "node-draining-elsewhere", time.Now(), 5, "7a1e7b9c-0000-4000-8000-000000002730")
	if !logsContain(l.rt, "draining without waiting for a slot", "last delivery") {
		t.Error("the drain past the limit was not logged")
	}
}

// drainPastHeldSlot puts one node of hookGroup (limit 1) behind slot 0,
// held by holder and last renewed at renewed, delivers its terminate hook
// on delivery rc, and wants the node drained and the hook completed then.
func drainPastHeldSlot(t *testing.T, holder string, renewed time.Time, rc int, token string) *live {
	t.Helper()
	ctx := testContext(t)
	l := newLive(t)
	n := l.node(ctx, served)
	l.k8s.Deployment(ctx, "web", 2, fixture.OnNode(n.Name))
	l.nodes(ctx, 1, served) // room for the replacements
	l.slotLease(ctx, t, hookGroup, 0, holder, renewed)
	hook := l.pendingHook(n, token)
	probe, env := l.probeCompletions(t, n.Name)
	l.start(t, append(l.groupEnv("1"), env)...)

	res := l.invoke(ctx, t, time.Minute, message{id: "hook", body: terminateHook(t, hook), receiveCount: rc})

	if diff := cmp.Diff([]string{}, failedIDs(batchResponse(t, res.Body))); diff != "" {
		t.Errorf("batch item failures (-want +got):\n%s", diff)
	}
	l.checkNode(ctx, t, n.Name, true, 0)
	drainedBeforeCompletion(t, probe, 1)
	return l
}
