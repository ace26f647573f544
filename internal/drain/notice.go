package drain

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Interruption is the value of AnnotationInterruption.
type Interruption struct {
	Kind string `json:"kind"`
	// Deadline is when the instance goes (RFC 3339, UTC); absent when
	// the event has none (a lifecycle hook).
	Deadline string `json:"deadline,omitempty"`
	EventID  string `json:"eventId,omitempty"`
	// EvictAt, on a pod that asked for notice: it is not evicted before.
	EvictAt string `json:"evictAt,omitempty"`
}

func (in Interruption) encode() string {
	b, _ := json.Marshal(in) // strings only: it cannot fail
	return string(b)
}

// interruptionOf is what a request tells the workloads; deadline is the
// one written (the node keeps the first deadline of an event).
func interruptionOf(req Request, deadline time.Time) Interruption {
	in := Interruption{Kind: req.Kind, EventID: req.EventID}
	if !deadline.IsZero() {
		in.Deadline = deadline.UTC().Format(annotationTimeLayout)
	}
	return in
}

// noticeEnd is when a pod that asked for notice at now may be evicted: a
// period after now, but no later than its grace and margin still fit
// before the deadline. Zero means at once.
func noticeEnd(now time.Time, period time.Duration, deadline time.Time, grace int64, margin time.Duration) time.Time {
	end := now.Add(period)
	if !deadline.IsZero() {
		end = minTime(end, deadline.Add(-time.Duration(grace)*time.Second-margin))
	}
	if !end.After(now) {
		return time.Time{}
	}
	return end.Truncate(time.Second)
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// announceAll warns every target to be evicted before the first eviction;
// pods arriving later are warned before their own.
func (r *run) announceAll() {
	r.mu.Lock()
	var ts []*target
	for _, t := range r.targets {
		if t.state != stateWaiting {
			ts = append(ts, t)
		}
	}
	r.mu.Unlock()
	var wg sync.WaitGroup
	for _, t := range ts {
		wg.Go(func() { r.announce(t) })
	}
	wg.Wait()
}

// announce writes t's annotation and announces it, once per Run; a Run
// resumed on a pod already carrying the same warning writes nothing and
// keeps the notice it was given.
func (r *run) announce(t *target) {
	if !r.d.cfg.WarnAll && !t.wantsNotice {
		return
	}
	t.noticeOnce.Do(func() {
		in := interruptionOf(r.req, r.req.Deadline)
		prev, _ := decodeInterruption(t.annotation)
		if t.wantsNotice {
			if prev.Kind == in.Kind && prev.EventID == in.EventID && prev.EvictAt != "" {
				in.EvictAt = prev.EvictAt
			} else if end := noticeEnd(r.d.now(), r.d.cfg.NoticePeriod, r.req.Deadline, t.grace, r.d.cfg.SafetyMargin); !end.IsZero() {
				in.EvictAt = end.UTC().Format(annotationTimeLayout)
			}
			t.evictAt, _ = time.Parse(annotationTimeLayout, in.EvictAt)
		}
		val := in.encode()
		if val == t.annotation {
			return
		}
		var wg sync.WaitGroup
		if r.d.cfg.Announce != nil {
			wg.Go(func() {
				if r.acquire(r.ctx) != nil {
					return
				}
				defer r.release()
				r.d.cfg.Announce(r.ctx, Event{Type: EventNotice, Node: r.req.Node, Pod: t.key, PodUID: string(t.uid),
					Detail: val, GraceSeconds: -1})
			})
		}
		if err := r.annotate(t, val); err != nil {
			r.log.Info("annotating pod before its eviction", slog.String("pod", t.key), slog.String("error", err.Error()))
		}
		wg.Wait()
	})
}

// annotate writes val on t, only on the pod t names (the UID in the patch
// is checked like a precondition).
func (r *run) annotate(t *target, val string) error {
	if err := r.acquire(r.ctx); err != nil {
		return err
	}
	defer r.release()
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"uid": t.uid, "annotations": map[string]string{AnnotationInterruption: val}}})
	if err != nil {
		return fmt.Errorf("encoding pod patch: %w", err)
	}
	_, err = r.d.client.CoreV1().Pods(t.ns).Patch(r.ctx, t.name, types.MergePatchType, body, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		return nil // gone: the eviction finds out
	}
	return err
}

func decodeInterruption(s string) (Interruption, bool) {
	var in Interruption
	if s == "" || json.Unmarshal([]byte(s), &in) != nil {
		return Interruption{}, false
	}
	return in, true
}

// awaitNotice waits out t's notice period; false when the Run must stop
// first.
func (r *run) awaitNotice(t *target) bool {
	wait := t.evictAt.Sub(r.d.now())
	if t.evictAt.IsZero() || wait <= 0 {
		return true
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-r.stop.Done():
		return false
	case <-t.gone:
	case <-timer.C:
	}
	return true
}

// ParseInterruption reads AnnotationInterruption's value.
func ParseInterruption(s string) (Interruption, error) {
	in, ok := decodeInterruption(s)
	if !ok {
		return Interruption{}, fmt.Errorf("parsing %s %q: not an interruption", AnnotationInterruption, s)
	}
	return in, nil
}
