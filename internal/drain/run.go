package drain

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// state is where a target stands in a Run.
type state int

const (
	statePending state = iota // not evicted yet
	stateBlocked              // refused by a disruption budget; retrying
	stateEvicted              // eviction accepted
	stateWaiting              // terminating, not by our eviction
	stateGone                 // left the node before we evicted it
	stateFailed               // refused for good
)

// run is one Run's evicting part: the plan, what the watch has seen and
// each target's state.
type run struct {
	d    *Drainer
	req  Request
	log  *slog.Logger
	plan plan
	sem  chan struct{}
	rv   string // resourceVersion of the pod list the plan came from

	mu      sync.Mutex
	present map[string]types.UID // pods on the node, by namespace/name
	targets map[string]*target
	changed chan struct{} // closed and replaced on every change
}

func (d *Drainer) newRun(ctx context.Context, req Request, log *slog.Logger) (*run, error) {
	list, err := d.client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: nodeSelector(req.Node)})
	if err != nil {
		return nil, fmt.Errorf("listing pods on %s: %w", req.Node, err)
	}
	r := &run{
		d: d, req: req, log: log,
		plan:    d.plan(ctx, list.Items, log),
		sem:     make(chan struct{}, d.cfg.Concurrency),
		rv:      list.ResourceVersion,
		present: presentPods(list.Items),
		targets: map[string]*target{},
		changed: make(chan struct{}),
	}
	for _, t := range r.plan.waiting {
		t.state = stateWaiting
		r.targets[t.key] = t
	}
	for _, wave := range r.plan.waves {
		for _, t := range wave {
			r.targets[t.key] = t
		}
	}
	return r, nil
}

func nodeSelector(node string) string { return "spec.nodeName=" + node }

func presentPods(pods []corev1.Pod) map[string]types.UID {
	m := make(map[string]types.UID, len(pods))
	for i := range pods {
		m[podKey(pods[i].Namespace, pods[i].Name)] = pods[i].UID
	}
	return m
}

// drain evicts wave after wave and waits for the pods to go. Retries and
// waiting end at the request's deadline or when ctx ends.
func (r *run) drain(ctx context.Context) {
	if len(r.targets) == 0 {
		return
	}
	stop, cancelStop := ctx, context.CancelFunc(func() {})
	if !r.req.Deadline.IsZero() {
		stop, cancelStop = context.WithDeadline(ctx, r.req.Deadline)
	}
	defer cancelStop()
	watchCtx, cancelWatch := context.WithCancel(ctx)
	defer cancelWatch()
	go r.watch(watchCtx)

	var wg sync.WaitGroup
	// Ordinary pods still terminating from an earlier Run belong to the
	// first wave: a resumed drain waits for them before the critical wave.
	var launched []*target
	for _, t := range r.plan.waiting {
		if !t.critical {
			launched = append(launched, t)
		}
	}
	for i, wave := range r.plan.waves {
		if len(wave) == 0 {
			continue
		}
		if i > 0 && !r.waitWave(stop, launched) {
			break
		}
		r.log.Debug("wave started", slog.Int("wave", i), slog.Int("pods", len(wave)))
		for _, t := range wave {
			wg.Go(func() { r.evict(ctx, stop, t) })
		}
		launched = append(launched, wave...)
	}
	r.waitUntil(stop, func() bool {
		for _, t := range r.targets {
			if !t.isGone && t.state != stateFailed {
				return false
			}
		}
		return true
	})
	cancelStop()
	wg.Wait()
}

// waitWave waits until the earlier waves' pods are gone (or refused for
// good), or until the critical reserve before the deadline begins. It
// returns false when the Run must stop instead.
func (r *run) waitWave(stop context.Context, earlier []*target) bool {
	wctx, cancel := stop, context.CancelFunc(func() {})
	if !r.req.Deadline.IsZero() {
		wctx, cancel = context.WithDeadline(stop, r.req.Deadline.Add(-r.d.cfg.CriticalReserve))
	}
	defer cancel()
	r.waitUntil(wctx, func() bool {
		for _, t := range earlier {
			if !t.isGone && t.state != stateFailed {
				return false
			}
		}
		return true
	})
	return stop.Err() == nil
}

// waitUntil waits until cond, evaluated under r.mu, holds or ctx ends.
func (r *run) waitUntil(ctx context.Context, cond func() bool) bool {
	for {
		r.mu.Lock()
		ok, ch := cond(), r.changed
		r.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
}

// broadcast wakes waitUntil; r.mu must be held.
func (r *run) broadcast() {
	close(r.changed)
	r.changed = make(chan struct{})
}

func (r *run) acquire(ctx context.Context) error {
	select {
	case r.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *run) release() { <-r.sem }

// left reports whether t has left the node.
func (r *run) left(t *target) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return t.isGone
}

// settle records t's new state and reports whether it changed.
func (r *run) settle(t *target, s state, detail string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	t.detail = detail
	if t.state == s {
		return false
	}
	t.state = s
	r.broadcast()
	return true
}

// note records the last transient error for t.
func (r *run) note(t *target, detail string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t.detail = detail
}

// report summarises the targets and the plan.
func (r *run) report() Report {
	r.mu.Lock()
	defer r.mu.Unlock()
	rep := Report{Node: r.req.Node, Skipped: slices.Clone(r.plan.skipped)}
	for _, t := range r.targets {
		switch {
		case t.state == stateEvicted:
			rep.Evicted = append(rep.Evicted, t.key)
			if !t.isGone {
				rep.Terminating = append(rep.Terminating, t.key)
			}
		case t.isGone:
		case t.state == stateWaiting:
			rep.Terminating = append(rep.Terminating, t.key)
		case t.state == stateBlocked:
			rep.BlockedByPDB = append(rep.BlockedByPDB, t.key)
		case t.state == stateFailed:
			rep.Failed = append(rep.Failed, Skipped{Pod: t.key, Reason: t.detail})
		case t.detail != "":
			rep.Failed = append(rep.Failed, Skipped{Pod: t.key, Reason: "retrying: " + t.detail})
		default:
			rep.Pending = append(rep.Pending, t.key)
		}
	}
	for _, l := range [][]string{rep.Evicted, rep.Terminating, rep.BlockedByPDB, rep.Pending} {
		slices.Sort(l)
	}
	bySkippedPod := func(a, b Skipped) int { return cmp.Compare(a.Pod, b.Pod) }
	slices.SortFunc(rep.Failed, bySkippedPod)
	slices.SortFunc(rep.Skipped, bySkippedPod)
	rep.Done = len(rep.Terminating)+len(rep.BlockedByPDB)+len(rep.Pending)+len(rep.Failed) == 0
	return rep
}
