package drain

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestGraceForEndsOrdinaryPodsBeforeTheReserve(t *testing.T) {
	cfg := DefaultConfig() // margin 5 s, reserve 15 s
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		critical bool
		left     time.Duration
		want     *int64
	}{
		{"ordinary ends at the reserve", false, 2 * time.Minute, ptr.To[int64](105)},
		{"critical ends at the margin", true, 2 * time.Minute, ptr.To[int64](115)},
		{"ordinary with a second before the reserve gets that second", false, 16 * time.Second, ptr.To[int64](1)},
		{"ordinary inside the reserve falls back to the margin", false, 15 * time.Second, ptr.To[int64](10)},
		{"no deadline keeps its own", false, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var deadline time.Time
			if tt.left > 0 {
				deadline = now.Add(tt.left)
			}
			got := cfg.graceFor(&target{grace: 300, critical: tt.critical}, deadline, now)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("graceFor mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReportKeepsTransientErrorsOutOfFailed(t *testing.T) {
	d := New(nil, DefaultConfig(), nil)
	r := &run{d: d, req: Request{Node: "n1"}, targets: map[string]*target{
		"ns/retrying": {key: "ns/retrying", state: statePending, detail: "connection reset by peer"},
		"ns/refused":  {key: "ns/refused", state: stateFailed, detail: "forbidden"},
	}}
	want := Report{Node: "n1", Pending: []string{"ns/retrying"}, Failed: []Skipped{{Pod: "ns/refused", Reason: "forbidden"}}}
	if diff := cmp.Diff(want, r.report()); diff != "" {
		t.Errorf("report mismatch (-want +got):\n%s", diff)
	}
}

func TestNoExecuteIsRefused(t *testing.T) {
	cfg := DefaultConfig()
	cfg.TaintEffect = string(corev1.TaintEffectNoExecute)
	_, err := New(nil, cfg, nil).Run(t.Context(), Request{Node: "n1", Kind: "rebalance-recommendation"})
	if !errors.Is(err, ErrNoExecute) {
		t.Errorf("Run with NoExecute: error %v, want ErrNoExecute", err)
	}
}

// TestGraceCap: DRAINPIPE_POD_GRACE_CAP (NTH's podTerminationGracePeriod)
// caps every pod's grace, with or without a deadline; a deadline nearer
// than the cap still cuts it further, and a pod whose own grace is shorter
// keeps its own.
func TestGraceCap(t *testing.T) {
	cfg := DefaultConfig()
	cfg.GraceCap = 60 * time.Second
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	pod := func(grace int64) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To(grace)}}
	}
	tests := []struct {
		name  string
		grace int64
		left  time.Duration
		want  *int64
	}{
		{"no deadline, long grace capped", 300, 0, ptr.To[int64](60)},
		{"no deadline, short grace kept", 20, 0, nil},
		{"far deadline, capped", 300, time.Hour, ptr.To[int64](60)},
		{"near deadline cuts below the cap", 300, 40 * time.Second, ptr.To[int64](25)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var deadline time.Time
			if tt.left > 0 {
				deadline = now.Add(tt.left)
			}
			got := cfg.graceFor(newTarget(pod(tt.grace), cfg.GraceCap), deadline, now)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("graceFor mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
