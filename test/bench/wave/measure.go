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
// server.
// A cordon is timed by commits (the API server's audit log) where it has
// the node, by the observer's watch otherwise.
// deleted counts per node the pods deleted past a budget.
func (r *result) fill(ctx context.Context, admin kubernetes.Interface, fake *awsfake.Server, f *fleet.Fleet, obs *fleet.Observer,
	commits map[string]time.Duration, deleted map[string]int, dlq string, apf0 int) (*result, error) {
	var cordoned, seen, drained []time.Duration
	times := obs.Times()
	r.outcome = classify(f.Targets(), times, deleted)
	for name, t := range times {
		c := t.Cordoned
		if at, ok := commits[name]; ok {
			c = at
		}
		cordoned, seen, drained = append(cordoned, c), append(seen, t.Cordoned), append(drained, t.Drained)
		if t.Drained == 0 {
			r.undrained++
		}
		if t.Reclaimed != 0 && t.Reclaimed == t.Drained {
			r.reclaimed++
			r.lost += t.Lost
		}
	}
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
