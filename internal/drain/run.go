package drain

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

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
	stateDeleted              // deleted at the deadline past a disruption budget
	stateGranted              // deleted to finish an eviction a budget had granted
	stateWaiting              // terminating, not by our eviction
	stateGone                 // left the node before we evicted it
	stateFailed               // refused for good
)

// run is one Run's evicting part: what the watch has seen and each
// target's state.
type run struct {
	d    *Drainer
	req  Request
	log  *slog.Logger
	opts judgeOpts
	sem  chan struct{}
	rv   string // resourceVersion of the pod list the Run started from
	// chaining: the budgets that let pods go, read once as the Run
	// starts; chains counts their pods on the nodes the instance drains.
	chaining []budgetChain
	chains   *waveChains
	// prev is the node's drain report as the Run started (see markSent).
	prev Summary

	// ctx bounds requests (the caller's budget); stop ends retries and
	// waiting (ctx or the request's deadline). Set before any work starts.
	ctx, stop context.Context
	wg        sync.WaitGroup // eviction goroutines

	mu      sync.Mutex
	present map[string]types.UID // pods on the node, by namespace/name
	judged  map[types.UID]bool   // pods already judged, targets or skipped
	targets map[string]*target
	skipped []Skipped
	started [2]bool       // waves started
	queued  [2][]*target  // targets waiting for their wave
	changed chan struct{} // closed and replaced on every change
}

func (d *Drainer) newRun(ctx context.Context, req Request, log *slog.Logger) (*run, error) {
	// From the watch cache as it stands (resourceVersion 0): a consistent
	// list waits for the cache to catch up with etcd, and under a large
	// wave such lists hit the API server's timeout. The watch resumes at
	// the list's resourceVersion, so what the cache had not yet seen
	// still comes.
	list, err := d.client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{
		FieldSelector: nodeSelector(req.Node), ResourceVersion: "0",
	})
	if err != nil {
		return nil, fmt.Errorf("listing pods on %s: %w", req.Node, err)
	}
	r := &run{
		d: d, req: req, log: log,
		opts: judgeOpts{
			evictUnmanaged: d.cfg.EvictUnmanaged,
			dsExists:       d.daemonSetCache(),
			taint:          corev1.Taint{Key: TaintKey, Value: req.Kind, Effect: corev1.TaintEffect(d.cfg.TaintEffect)},
		},
		sem:     make(chan struct{}, d.cfg.Concurrency),
		rv:      list.ResourceVersion,
		present: presentPods(list.Items),
		judged:  map[types.UID]bool{},
		targets: map[string]*target{},
		changed: make(chan struct{}),
		chains:  d.cfg.Pace.waveChains(),
	}
	if req.Evict {
		r.chaining = d.budgetChains(ctx, log)
	}
	for i := range list.Items {
		r.admit(ctx, &list.Items[i])
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

// drain evicts wave after wave and waits for the pods to go, judging pods
// that arrive meanwhile. Retries and waiting end at the request's deadline,
// when its Yield ends (each pod of the wave under way sent first) or when
// ctx ends. Every goroutine it starts has ended when it returns.
func (r *run) drain(ctx context.Context) {
	if len(r.targets) == 0 {
		return
	}
	stop, cancelStop := ctx, context.CancelFunc(func() {})
	if !r.req.Deadline.IsZero() {
		stop, cancelStop = context.WithDeadline(ctx, r.req.Deadline)
	}
	if r.req.Yield != nil {
		var cancelYield context.CancelFunc
		stop, cancelYield = context.WithCancel(stop)
		defer context.AfterFunc(r.req.Yield, cancelYield)()
		defer cancelYield()
	}
	defer cancelStop()
	r.ctx, r.stop = ctx, stop
	defer r.chains.add(r.chainPods())()
	defer r.sentMarker(stop)()
	watchCtx, cancelWatch := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		r.watch(watchCtx)
	}()

	r.announceAll()
	r.mu.Lock()
	r.startWaveLocked(0)
	r.mu.Unlock()
	if r.waitWave() {
		r.mu.Lock()
		r.startWaveLocked(1)
		r.mu.Unlock()
	}
	// Done means no evictable pod is left: before saying so, a fresh list
	// catches pods the watch has not shown yet.
	for r.waitFor(stop, r.finished) {
		if r.recheck(ctx) == 0 {
			break
		}
	}
	cancelStop()
	cancelWatch()
	<-watched // no admission after this, so no wg.Go races wg.Wait
	r.wg.Wait()
}

// chainPods counts the Run's targets per budget.
func (r *run) chainPods() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := map[string]int{}
	for _, t := range r.targets {
		if t.chain != nil {
			n[t.chain.key]++
		}
	}
	return n
}

// settled reports whether t needs nothing more from the Run at now: it is
// gone, refused for good, or stuck terminating.
func (r *run) settled(t *target, now time.Time) bool {
	return t.isGone || t.state == stateFailed || r.stuck(t, now)
}

// stuck reports whether t has outlived its deletion grace by the stuck
// timeout (a finalizer no one removes, a dead kubelet). r.mu must be held.
func (r *run) stuck(t *target, now time.Time) bool {
	return !t.isGone && !t.ends.IsZero() && !now.Before(t.ends.Add(r.d.cfg.StuckAfter))
}

// stuckAt is when terminating t counts as stuck; zero when it cannot.
func (r *run) stuckAt(t *target) time.Time {
	if t.isGone || t.ends.IsZero() {
		return time.Time{}
	}
	return t.ends.Add(r.d.cfg.StuckAfter)
}

// finished is the Run's end condition: every target settled. r.mu held.
func (r *run) finished(now time.Time) (bool, time.Time) {
	return r.all(now, func(t *target) bool { return r.settled(t, now) })
}

// all reports whether ok holds for every target, and otherwise the
// earliest time a target may turn stuck (zero for none), to wake at.
func (r *run) all(now time.Time, ok func(*target) bool) (bool, time.Time) {
	var wake time.Time
	done := true
	for _, t := range r.targets {
		if ok(t) {
			continue
		}
		done = false
		if at := r.stuckAt(t); !at.IsZero() && (wake.IsZero() || at.Before(wake)) {
			wake = at
		}
	}
	return done, wake
}

// waitWave waits until the critical wave may start: every ordinary pod is
// gone, refused, stuck or blocked by a budget (a blocked pod may wait for
// ever without a deadline; the critical pods' own budgets still hold), or
// the critical reserve before the deadline has begun. It returns false
// when the Run must stop instead.
func (r *run) waitWave() bool {
	wctx, cancel := r.stop, context.CancelFunc(func() {})
	if !r.req.Deadline.IsZero() {
		wctx, cancel = context.WithDeadline(r.stop, r.req.Deadline.Add(-r.d.cfg.CriticalReserve))
	}
	defer cancel()
	r.waitFor(wctx, func(now time.Time) (bool, time.Time) {
		return r.all(now, func(t *target) bool {
			return t.critical || t.protected || t.state == stateBlocked || r.settled(t, now)
		})
	})
	return r.stop.Err() == nil
}

// waitFor waits until cond, evaluated under r.mu, holds or ctx ends. cond
// also returns when to evaluate it again without a change (zero: only on
// a change).
func (r *run) waitFor(ctx context.Context, cond func(now time.Time) (bool, time.Time)) bool {
	for {
		r.mu.Lock()
		now := r.d.now()
		ok, wake := cond(now)
		ch := r.changed
		r.mu.Unlock()
		if ok {
			return true
		}
		var timer <-chan time.Time
		var t *time.Timer
		if !wake.IsZero() {
			t = time.NewTimer(wake.Sub(now))
			timer = t.C
		}
		select {
		case <-ch:
		case <-timer:
		case <-ctx.Done():
		}
		if t != nil {
			t.Stop()
		}
		if ctx.Err() != nil {
			return false
		}
	}
}

// broadcast wakes waitFor; r.mu must be held.
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
