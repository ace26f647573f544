package drain

import (
	"log/slog"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// A pod already terminating is evicted again, with a shorter grace, when
// its deletion would end inside the safety margin before the deadline, or
// after it; one ending before the margin, or with no deadline to race, is
// only waited for.
func TestTerminatingPodEndsTooLate(t *testing.T) {
	deadline := time.Unix(1e9, 0)
	r := &run{d: New(nil, DefaultConfig(), nil)} // margin 5 s
	for _, c := range []struct {
		name     string
		deadline time.Time
		ends     time.Time
		want     bool
	}{
		{"ends before the margin", deadline, deadline.Add(-10 * time.Second), false},
		{"ends inside the margin", deadline, deadline.Add(-3 * time.Second), true},
		{"ends past the deadline", deadline, deadline.Add(time.Minute), true},
		{"no deadline", time.Time{}, deadline, false},
		{"not terminating", deadline, time.Time{}, false},
	} {
		r.req.Deadline = c.deadline
		if got := r.endsTooLate(&target{ends: c.ends}); got != c.want {
			t.Errorf("%s: too late %v, want %v", c.name, got, c.want)
		}
	}
}

// A wave launches its pods deepest chain first, so that they take their
// semaphore slots and their turns at the pace before the rest; pods of
// one depth keep the order they came in. Critical pods queued with the
// first wave show the order: they queue again for theirs as they launch.
func TestWaveLaunchesDeepestChainsFirst(t *testing.T) {
	chains := &waveChains{}
	defer chains.add(map[string]int{"shop/db": 4, "shop/api": 6})()
	db := &budgetChain{key: "shop/db", allowance: 1}   // depth 3
	api := &budgetChain{key: "shop/api", allowance: 5} // depth 1
	r := &run{log: slog.New(slog.DiscardHandler), chains: chains}
	for _, q := range []struct {
		key   string
		chain *budgetChain
	}{{"free-1", nil}, {"api-1", api}, {"db-1", db}, {"free-2", nil}, {"db-2", db}} {
		r.queued[0] = append(r.queued[0], &target{key: q.key, chain: q.chain, critical: true})
	}
	r.startWaveLocked(0)
	var got []string
	for _, t := range r.queued[1] {
		got = append(got, t.key)
	}
	if want := []string{"db-1", "db-2", "api-1", "free-1", "free-2"}; !slices.Equal(got, want) {
		t.Errorf("launched %v, want %v", got, want)
	}
}

// The grace cap shortens only a longer grace: a pod whose own grace is the
// cap keeps its own, and no grace is sent for it.
func TestGraceCapShortensOnlyLongerGraces(t *testing.T) {
	pod := func(grace int64) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To(grace)}}
	}
	for _, c := range []struct {
		grace  int64
		want   int64
		capped bool
	}{{59, 59, false}, {60, 60, false}, {61, 60, true}} {
		tg := newTarget(pod(c.grace), time.Minute)
		if tg.grace != c.want || tg.capped != c.capped {
			t.Errorf("own grace %d s under a cap of 60 s: %d s, capped %v; want %d s, capped %v", c.grace, tg.grace, tg.capped, c.want, c.capped)
		}
		if sent := tg.sendGrace(time.Time{}, time.Now(), time.Second); (sent != nil) != c.capped {
			t.Errorf("own grace %d s under a cap of 60 s: grace sent %d (-1: none), want one only when capped", c.grace, ptr.Deref(sent, -1))
		}
	}
}
