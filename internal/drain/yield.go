package drain

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A drain that can wait (a terminate hook's) yields to the wave's drains
// racing a deadline, wherever they run: while a node Drainpipe holds has a
// deadline within yieldHorizon and its drain has not reported done (nor
// every pod evicted: reportEvicted), the drains without a deadline send
// no eviction. Inside an instance the
// Pace's turns already put deadlines first; across instances this is
// what keeps hook drains from spending the cluster's rate while Spot
// nodes are still draining. A hook's instance waits for its drain (the
// lifecycle action's heartbeat), a Spot instance two minutes at most.
const (
	// yieldHorizon: deadlines further away are not at risk from a wave's
	// hooks (a scheduled event's, days ahead, holds nothing back).
	yieldHorizon = 5 * time.Minute
	// yieldRecheck: how often an instance lists the held nodes while its
	// drains yield, once for all of them.
	yieldRecheck = 5 * time.Second
)

// deadlines is an instance's view of the wave's deadlines at risk,
// refreshed at most every yieldRecheck for all its drains. It is safe for
// concurrent use.
type deadlines struct {
	mu      sync.Mutex
	checked time.Time
	until   time.Time // the latest deadline at risk; zero: none
	// crowded: other held nodes, first cordoned within yieldHorizon, have
	// drains not reported done (see Pace.crowd).
	crowded bool
}

// atRisk returns the latest deadline at now of a held node not own whose
// drain is not done, zero for none (or when the nodes cannot be read: a
// hook drain then goes as before); and whether other drains are under way
// (held nodes not own, first cordoned within yieldHorizon, whose drain has
// not reported done).
func (d *Drainer) atRisk(ctx context.Context, dl *deadlines, own func(node string) bool, log *slog.Logger) (until time.Time, crowded bool) {
	now := d.now()
	dl.mu.Lock()
	defer dl.mu.Unlock()
	if !dl.checked.IsZero() && now.Sub(dl.checked) < yieldRecheck {
		return live(dl.until, now), dl.crowded
	}
	dl.checked = now
	// From the API server's cache: a few seconds stale only delays or
	// shortens a yield.
	list, err := d.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: HeldSelector, ResourceVersion: "0"})
	if err != nil {
		log.Warn("cannot list held nodes: drains without a deadline do not yield", slog.String("error", err.Error()))
		dl.until, dl.crowded = time.Time{}, false
		return dl.until, dl.crowded
	}
	dl.until, dl.crowded = time.Time{}, false
	for i := range list.Items {
		n := &list.Items[i]
		if own(n.Name) || reportedDone(n.Annotations[AnnotationReport]) {
			continue
		}
		if first, err := time.Parse(annotationTimeLayout, n.Annotations[AnnotationFirstSeen]); err == nil && now.Sub(first) < yieldHorizon {
			dl.crowded = true
		}
		at := nextDeadline(n.Annotations, now)
		if at.IsZero() || at.Sub(now) > yieldHorizon {
			continue
		}
		if at.After(dl.until) {
			dl.until = at
		}
	}
	return dl.until, dl.crowded
}

// nextDeadline is when a held node's instance goes, after now: the
// earliest deadline to come among its holds (the single-hold marks name
// only the newest), zero for none.
func nextDeadline(a map[string]string, now time.Time) time.Time {
	var next time.Time
	for _, h := range readHolds(a) {
		at, err := time.Parse(time.RFC3339, h.Deadline)
		if err == nil && at.After(now) && (next.IsZero() || at.Before(next)) {
			next = at
		}
	}
	return next
}

func live(until, now time.Time) time.Time {
	if until.After(now) {
		return until
	}
	return time.Time{}
}

// reportedDone reports whether a node's drain report says done, or that
// every pod is evicted and only their grace periods are left.
func reportedDone(report string) bool {
	var s struct {
		State string `json:"state"`
	}
	return report != "" && json.Unmarshal([]byte(report), &s) == nil && (s.State == "done" || s.State == reportEvicted)
}

// yield tells the pace whether other drains are under way (see
// Pace.crowd) and waits, for a drain without a deadline, until no deadline
// of the wave is at risk; false when the Run must stop instead.
func (r *run) yield() bool {
	p := r.d.cfg.Pace
	if p == nil {
		return true
	}
	for {
		until, crowded := r.d.atRisk(r.ctx, &p.deadlines, p.draining, r.log)
		p.crowd(crowded)
		if until.IsZero() || !r.req.Deadline.IsZero() {
			return true
		}
		t := time.NewTimer(min(until.Sub(r.d.now()), yieldRecheck))
		select {
		case <-r.stop.Done():
			t.Stop()
			return false
		case <-t.C:
		}
	}
}
