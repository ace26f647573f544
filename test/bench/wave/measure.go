package main

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/fleet"
)

// waitSettled waits until every message is deleted or dead-lettered.
func waitSettled(ctx context.Context, fake *awsfake.Server, queue string) {
	_ = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(context.Context) (bool, error) {
		n, err := fleet.Unsettled(fake, queue)
		return n == 0, err
	})
}

// waitCordoned waits until every target node is cordoned (the floor
// run drains nothing).
func waitCordoned(ctx context.Context, obs *fleet.Observer) error {
	return wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(context.Context) (bool, error) {
		for _, t := range obs.Times() {
			if t.Cordoned == 0 {
				return false, nil
			}
		}
		return true, nil
	})
}

// fill reads the run's outcome from the observer, the fake and the API
// server (see perNode). deleted counts per node the pods deleted past a
// budget.
func (r *result) fill(ctx context.Context, admin kubernetes.Interface, fake *awsfake.Server, f *fleet.Fleet, obs *fleet.Observer,
	commits map[string]time.Duration, deleted map[string]int, dlq string, apf0 int) (*result, error) {
	times := obs.Times()
	r.outcome = classify(f.Targets(), times, deleted)
	n := perNode(times, commits, deleted)
	cordoned, seen, drained := n.cordoned, n.seen, n.drained
	r.undrained, r.reclaimed, r.lost, r.violated = n.undrained, n.reclaimed, n.lost, n.violations
	r.cordoned, r.drained, r.seen = cordoned, drained, seen
	r.cordonP99, r.cordonSeenP99 = fleet.Percentile(cordoned, 99), fleet.Percentile(seen, 99)
	r.drainedP50, r.drainedP99 = fleet.Percentile(drained, 50), fleet.Percentile(drained, 99)
	r.drainedP99 = min(r.drainedP99, r.bound) // never seen: the bound, a lower bound
	r.hooks = f.HookState(fake)
	if dlq != "" {
		msgs, err := fake.QueueMessages(dlq)
		if err != nil {
			return nil, err
		}
		r.dlq = len(msgs)
	}
	apf, err := fleet.APFRejected(ctx, admin)
	if err != nil {
		return nil, err
	}
	r.apf = apf - apf0
	return r, nil
}

// nodeTimes is a run's times per interrupted node (zero: never) and what
// befell the nodes never drained.
type nodeTimes struct {
	cordoned, seen, drained []time.Duration
	// undrained: nodes never drained, among them those reclaimed with
	// pods on them (reclaimed, holding lost evictable pods) and those
	// emptied by deleting pods past their budget (violations pods).
	undrained, reclaimed, lost, violations int
}

// perNode reads the nodes' times. A node EC2 took back with pods on it is
// never drained, nor is one whose pods were deleted past their budget:
// both count as undrained at the time they were emptied, not as drained.
// A cordon is timed by commits (the API server's audit log) where it has
// the node, by the observer's watch otherwise.
func perNode(times map[string]fleet.Times, commits map[string]time.Duration, deleted map[string]int) nodeTimes {
	var n nodeTimes
	for name, t := range times {
		c := t.Cordoned
		if at, ok := commits[name]; ok {
			c = at
		}
		d := t.Drained
		if t.Reclaimed != 0 && t.Reclaimed == t.Drained {
			n.reclaimed++
			n.lost += t.Lost
			d = 0
		}
		if deleted[name] > 0 {
			n.violations += deleted[name]
			d = 0
		}
		if d == 0 {
			n.undrained++
		}
		n.cordoned, n.seen, n.drained = append(n.cordoned, c), append(n.seen, t.Cordoned), append(n.drained, d)
	}
	return n
}
