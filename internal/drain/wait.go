package drain

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// watch follows the node's pods from the plan's list until ctx ends, so a
// Run learns that a pod is gone the moment the API server deletes it rather
// than at the next poll. When the watch breaks it resumes from the last
// resourceVersion seen, and relists when that is too old.
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
			failures++
			rv = ""
			if !sleep(ctx, backoff(failures, r.d.cfg.BackoffInitial, r.d.cfg.BackoffMax, rand.Float64)) {
				return
			}
			continue
		}
		rv = r.consume(w.ResultChan(), rv)
		w.Stop()
		failures = 0
	}
}

// consume applies watch events until the channel closes and returns the
// resourceVersion to resume from, or "" when the watch must start over
// from a fresh list.
func (r *run) consume(events <-chan watch.Event, rv string) string {
	for ev := range events {
		if ev.Type == watch.Error {
			return ""
		}
		obj, err := meta.Accessor(ev.Object)
		if err != nil {
			continue
		}
		rv = obj.GetResourceVersion()
		switch ev.Type {
		case watch.Added, watch.Modified:
			r.observe(podKey(obj.GetNamespace(), obj.GetName()), obj.GetUID(), true)
		case watch.Deleted:
			r.observe(podKey(obj.GetNamespace(), obj.GetName()), obj.GetUID(), false)
		}
	}
	return rv
}

// relist replaces what the watch knows with a fresh list.
func (r *run) relist(ctx context.Context) (string, error) {
	list, err := r.d.client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: nodeSelector(r.req.Node)})
	if err != nil {
		return "", err
	}
	present := presentPods(list.Items)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.present = present
	for _, t := range r.targets {
		r.checkGone(t)
	}
	return list.ResourceVersion, nil
}

// observe records that pod key with uid is (or is no longer) on the node.
func (r *run) observe(key string, uid types.UID, here bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case here:
		r.present[key] = uid
	case r.present[key] == uid:
		delete(r.present, key)
	}
	if t, ok := r.targets[key]; ok {
		r.checkGone(t)
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
