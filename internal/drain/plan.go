package drain

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// target is a pod a Run evicts or waits for.
type target struct {
	key      string // namespace/name
	ns, name string
	uid      types.UID
	grace    int64 // the pod's own terminationGracePeriodSeconds, capped at Config.GraceCap
	capped   bool  // grace is the cap, shorter than the pod's own
	critical bool
	chain    *budgetChain      // the budget that selects it, nil for none: the deeper its chain, the sooner it starts
	labels   map[string]string // to find its disruption budget
	created  time.Time
	// shorten: already terminating, but ending after the deadline; it is
	// evicted again with the clamped grace (the API skips budgets for
	// terminating pods and only ever shortens a grace).
	shorten bool
	// annotation: the pod's AnnotationInterruption when listed;
	// wantsNotice: it asked for a notice period (AnnotationNotice).
	annotation  string
	wantsNotice bool
	noticeOnce  sync.Once
	evictAt     time.Time // set by announce: not evicted before
	// protectedUntil: karpenter.sh/do-not-disrupt's end (zero: for ever)
	// when protected is set at admission.
	protectedUntil time.Time

	// Guarded by run.mu.
	budget                    string // the budget refusing it, found at its first refusal
	refusedFirst, refusedLast time.Time
	refusals                  int
	protected                 bool // do-not-disrupt, still held (holdProtected)
	state                     state
	detail                    string        // last refusal or error
	ends                      time.Time     // when its deletion grace runs out; zero until it terminates
	gone                      chan struct{} // closed when the pod leaves the node
	isGone                    bool
}

// newTarget is pod to be evicted, its grace capped at graceCap (0: no cap).
func newTarget(pod *corev1.Pod, graceCap time.Duration) *target {
	grace := int64(defaultPodGraceSecond)
	if g := pod.Spec.TerminationGracePeriodSeconds; g != nil {
		grace = *g
	}
	capped := false
	if c := int64(graceCap / time.Second); graceCap > 0 && grace > c {
		grace, capped = max(c, minGraceSeconds), true
	}
	t := &target{
		key:      podKey(pod.Namespace, pod.Name),
		ns:       pod.Namespace,
		name:     pod.Name,
		uid:      pod.UID,
		grace:    grace,
		capped:   capped,
		critical: pod.Spec.Priority != nil && *pod.Spec.Priority >= criticalPriority,
		labels:   pod.Labels,
		created:  pod.CreationTimestamp.Time,
		gone:     make(chan struct{}),

		annotation:  pod.Annotations[AnnotationInterruption],
		wantsNotice: pod.Annotations[AnnotationNotice] == "true",
	}
	if ts := pod.DeletionTimestamp; ts != nil {
		// The API sets it to the deletion time plus its grace.
		t.ends = ts.Time
	}
	return t
}

// wave is the eviction wave t belongs to. Waves follow graceful node
// shutdown: ordinary pods first, critical ones last. Pods already
// terminating need no wave.
func (t *target) wave() int {
	if t.critical && t.state != stateWaiting {
		return 1
	}
	return 0
}

func podKey(ns, name string) string { return ns + "/" + name }

// admit judges pod, unless the Run already has, and makes it a target when
// it is to be evicted or waited for. It reports whether a target was added.
// Pods the watch shows arriving later go through it too.
func (r *run) admit(ctx context.Context, pod *corev1.Pod) bool {
	r.mu.Lock()
	seen := r.judged[pod.UID]
	r.mu.Unlock()
	if seen {
		return false
	}
	v := judge(ctx, pod, r.opts)
	key := podKey(pod.Namespace, pod.Name)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.judged[pod.UID] {
		return false
	}
	r.judged[pod.UID] = true
	if v.act == actSkip {
		r.skipped = append(r.skipped, Skipped{Pod: key, Reason: v.reason})
		r.log.Debug("pod skipped", slog.String("pod", key), slog.String("reason", v.reason))
		return false
	}
	if old, ok := r.targets[key]; ok && !old.isGone {
		return false
	}
	t := newTarget(pod, r.d.cfg.GraceCap)
	t.chain = chainOf(r.chaining, pod.Namespace, pod.Labels)
	if v.act == actWait {
		t.state = stateWaiting
		t.shorten = r.endsTooLate(t)
	} else {
		t.protected, t.protectedUntil = protection(pod, r.d.now())
	}
	switch {
	case v.warn:
		r.log.Warn("evicting pod", slog.String("pod", key), slog.String("note", v.reason))
	case v.act == actEvict && v.reason != "":
		r.log.Info("evicting pod", slog.String("pod", key), slog.String("note", v.reason))
	}
	r.targets[key] = t
	r.launchLocked(t)
	r.broadcast()
	return true
}

// endsTooLate reports whether terminating t would still run when the
// instance goes.
func (r *run) endsTooLate(t *target) bool {
	dl := r.req.Deadline
	return !dl.IsZero() && !t.ends.IsZero() && t.ends.After(dl.Add(-r.d.cfg.SafetyMargin))
}

// launchLocked starts work on t when its wave has started, and queues it
// otherwise. r.mu must be held.
func (r *run) launchLocked(t *target) {
	if t.protected && r.started[0] {
		// Held from the first wave on, outside the waves' order.
		r.wg.Go(func() { r.holdProtected(t) })
		return
	}
	w := t.wave()
	if t.protected {
		w = 0
	}
	if !r.started[w] {
		r.queued[w] = append(r.queued[w], t)
		return
	}
	if t.state == stateWaiting && !t.shorten {
		return // the watch tells when it is gone
	}
	r.wg.Go(func() { r.evict(t) })
}

// startWaveLocked starts wave w's queued targets. r.mu must be held.
func (r *run) startWaveLocked(w int) {
	r.started[w] = true
	queued := r.queued[w]
	r.queued[w] = nil
	// The deepest chains first: they take their semaphore slots and
	// their turns at the pace before the rest.
	slices.SortStableFunc(queued, func(a, b *target) int { return r.chains.depth(b.chain) - r.chains.depth(a.chain) })
	r.log.Debug("wave started", slog.Int("wave", w), slog.Int("pods", len(queued)))
	for _, t := range queued {
		r.launchLocked(t)
	}
}

// daemonSetCache looks DaemonSets up once per Run; it is safe for
// concurrent use (the watch admits late pods).
func (d *Drainer) daemonSetCache() daemonSetExists {
	var mu sync.Mutex
	seen := map[string]bool{}
	return func(ctx context.Context, ns, name string) (bool, error) {
		key := podKey(ns, name)
		mu.Lock()
		ok, hit := seen[key]
		mu.Unlock()
		if hit {
			return ok, nil
		}
		_, err := d.client.AppsV1().DaemonSets(ns).Get(ctx, name, metav1.GetOptions{})
		switch {
		case err == nil:
			ok = true
		case apierrors.IsNotFound(err):
			ok = false
		default:
			return false, fmt.Errorf("getting daemonset %s: %w", key, err)
		}
		mu.Lock()
		seen[key] = ok
		mu.Unlock()
		return ok, nil
	}
}
