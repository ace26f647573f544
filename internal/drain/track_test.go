package drain

import (
	"testing"
	"time"
)

// An accepted eviction or delete expects the pod gone once the grace it
// was sent ends: the grace given, zero included, or the pod's own when
// none was sent (-1).
func TestAcceptedExpectsThePodGoneWhenItsGraceEnds(t *testing.T) {
	now := time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		gs   int64
		want time.Time
	}{
		{"grace sent", 10, now.Add(10 * time.Second)},
		{"no grace: at once", 0, now},
		{"the pod's own grace", -1, now.Add(30 * time.Second)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := New(nil, DefaultConfig(), nil)
			d.now = func() time.Time { return now }
			r := &run{d: d, changed: make(chan struct{})}
			tg := &target{key: "ns/a", grace: 30, detail: "connection reset by peer"}
			r.accepted(tg, stateEvicted, tt.gs)
			if !tg.ends.Equal(tt.want) || tg.state != stateEvicted || tg.detail != "" {
				t.Errorf("after accepted(%d): ends %v, state %d, detail %q; want ends %v, evicted, no detail",
					tt.gs, tg.ends, tg.state, tg.detail, tt.want)
			}
		})
	}
}

// A budget's refusals are counted with the first and the last one's time:
// the report's Block tells how long a budget has held a pod.
func TestRefusedCountsRefusalsAndKeepsTheFirst(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)
	now := t0
	d := New(nil, DefaultConfig(), nil)
	d.now = func() time.Time { return now }
	r := &run{d: d}
	tg := &target{key: "ns/db-0"}
	for range 3 {
		r.refused(tg)
		now = now.Add(time.Second)
	}
	if tg.refusals != 3 || !tg.refusedFirst.Equal(t0) || !tg.refusedLast.Equal(t0.Add(2*time.Second)) {
		t.Errorf("after 3 refusals: %d, first %v, last %v; want 3, %v, %v",
			tg.refusals, tg.refusedFirst, tg.refusedLast, t0, t0.Add(2*time.Second))
	}
}
