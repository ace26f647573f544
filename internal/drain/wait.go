package drain

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// watch follows the node's pods from the Run's list until ctx ends, so a
// Run learns that a pod is gone the moment the API server deletes it rather
// than at the next poll, and judges pods bound to the node meanwhile. When
// the watch breaks it resumes from the last resourceVersion seen, and
// relists when that is too old; a watch that fails or ends without an
// event is retried after a backoff.
func (r *run) watch(ctx context.Context) {
	rv := r.rv
	for failures := 0; ctx.Err() == nil; {
		if rv == "" {
			var err error
			if rv, err = r.relist(ctx); err != nil {
				r.log.Debug("relisting pods failed", slog.String("error", err.Error()))
				failures++
				if !sleep(ctx, backoff(failures, r.d.cfg.BackoffInitial, r.d.cfg.BackoffMax, rand.Float64)) {
					return
				}
				continue
			}
		}
		w, err := r.d.client.CoreV1().Pods(metav1.NamespaceAll).Watch(ctx, metav1.ListOptions{
			FieldSelector:       nodeSelector(r.req.Node),
			ResourceVersion:     rv,
			AllowWatchBookmarks: true,
		})
		if err != nil {
			r.log.Debug("watching pods failed", slog.String("error", err.Error()))
			rv = ""
		} else {
			var n int
			rv, n = r.consume(ctx, w.ResultChan(), rv)
			w.Stop()
			if n > 0 {
				failures = 0
				continue
			}
		}
		failures++
		if !sleep(ctx, backoff(failures, r.d.cfg.BackoffInitial, r.d.cfg.BackoffMax, rand.Float64)) {
			return
		}
	}
}

// consume applies watch events until the channel closes or ctx ends (a
// watcher need not close its channel when its context does). It returns
// the resourceVersion to resume from, or "" when the watch must start
// over from a fresh list, and how many events it applied.
func (r *run) consume(ctx context.Context, events <-chan watch.Event, rv string) (string, int) {
	n := 0
	for {
		var ev watch.Event
		var open bool
		select {
		case <-ctx.Done():
			return rv, n
		case ev, open = <-events:
		}
		if !open {
			return rv, n
		}
		if ev.Type == watch.Error {
			return "", n
		}
		pod, ok := ev.Object.(*corev1.Pod)
		if !ok {
			continue
		}
		n++
		rv = pod.ResourceVersion
		switch ev.Type {
		case watch.Added, watch.Modified:
			r.observe(ctx, pod, true)
		case watch.Deleted:
			r.observe(ctx, pod, false)
		}
	}
}

// relist replaces what the watch knows with a fresh list.
func (r *run) relist(ctx context.Context) (string, error) {
	list, err := r.d.client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: nodeSelector(r.req.Node)})
	if err != nil {
		return "", err
	}
	present := presentPods(list.Items)
	r.mu.Lock()
	r.present = present
	for _, t := range r.targets {
		r.checkGone(t)
	}
	r.mu.Unlock()
	for i := range list.Items {
		r.admit(ctx, &list.Items[i])
	}
	return list.ResourceVersion, nil
}

// recheck lists the node's pods once more and admits those not judged
// yet, returning how many became targets. A failed list admits none: the
// watch has the last word then.
func (r *run) recheck(ctx context.Context) int {
	list, err := r.d.client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: nodeSelector(r.req.Node)})
	if err != nil {
		r.log.Debug("listing pods again failed", slog.String("error", err.Error()))
		return 0
	}
	n := 0
	for i := range list.Items {
		if r.admit(ctx, &list.Items[i]) {
			n++
		}
	}
	return n
}

// observe records that pod is (or is no longer) on the node, and judges
// it when it is new to the Run.
func (r *run) observe(ctx context.Context, pod *corev1.Pod, here bool) {
	key := podKey(pod.Namespace, pod.Name)
	r.mu.Lock()
	switch {
	case here:
		r.present[key] = pod.UID
	case r.present[key] == pod.UID:
		delete(r.present, key)
	}
	if t, ok := r.targets[key]; ok {
		if ts := pod.DeletionTimestamp; here && t.uid == pod.UID && ts != nil && !ts.Time.Equal(t.ends) {
			t.ends = ts.Time
			r.broadcast()
		}
		r.checkGone(t)
	}
	known := r.judged[pod.UID]
	r.mu.Unlock()
	if here && !known {
		r.admit(ctx, pod)
	}
}

// checkGone marks t gone once the pod it names is no longer on the node
// (deleted, or replaced by a new pod of the same name). r.mu must be held.
func (r *run) checkGone(t *target) {
	if t.isGone || r.present[t.key] == t.uid {
		return
	}
	t.isGone = true
	close(t.gone)
	r.broadcast()
	r.log.Debug("pod gone", slog.String("pod", t.key))
	// Emitting under r.mu keeps events in order; OnEvent must be quick.
	r.d.emit(Event{Type: EventGone, Node: r.req.Node, Pod: t.key, PodUID: string(t.uid), GraceSeconds: -1})
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
