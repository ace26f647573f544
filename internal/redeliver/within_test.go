package redeliver

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/drainpipe/drainpipe/test/awsfake"
)

// A retry carrying a pending lifecycle hook comes back within its cap
// (whole seconds, rounded down, at least 1 s) when the backoff would keep
// it longer; a shorter backoff and uncapped retries are left as they were.
// The fault matrix's case: a 60 s hook (cap 30 s) on the 5th delivery of a
// 5 s backoff (80 s), and a 300 s hook (cap 150 s) on the 6th at 15 s (300 s).
func TestScheduleCapsDelay(t *testing.T) {
	tests := []struct {
		name   string
		base   time.Duration
		count  int
		within time.Duration
		want   int
	}{
		{"60s hook, 5th delivery of 5s", 5 * time.Second, 5, 30 * time.Second, 30},
		{"300s hook, 6th delivery of 15s", 15 * time.Second, 6, 150 * time.Second, 150},
		{"backoff already shorter", 15 * time.Second, 1, 30 * time.Second, 15},
		{"no cap", 5 * time.Second, 5, 0, 80},
		{"cap rounded down", 15 * time.Second, 3, 29500 * time.Millisecond, 29},
		{"cap at least a second", 15 * time.Second, 1, 300 * time.Millisecond, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := newScene(t, tt.base)
			m := sc.msg(t, sc.urlA, tt.count)
			sc.s.Schedule(sc.ctx, []Retry{{Message: m, Within: tt.within}})
			want := []awsfake.VisibilityChange{{QueueURL: sc.urlA, ReceiptHandle: m.ReceiptHandle, Timeout: tt.want}}
			if diff := cmp.Diff(want, sc.fake.VisibilityChanges()); diff != "" {
				t.Errorf("visibility changes (-want +got):\n%s", diff)
			}
		})
	}
}

// With the backoff turned off, a capped retry still comes back within its
// cap (the queue's own visibility timeout would outlive the hook); the
// others are left to the queue.
func TestScheduleBackoffOff(t *testing.T) {
	sc := newScene(t, 0)
	capped, plain := sc.msg(t, sc.urlA, 1), sc.msg(t, sc.urlA, 1)
	sc.s.Schedule(sc.ctx, []Retry{{Message: plain}, {Message: capped, Within: 30 * time.Second}})
	want := []awsfake.VisibilityChange{{QueueURL: sc.urlA, ReceiptHandle: capped.ReceiptHandle, Timeout: 30}}
	if diff := cmp.Diff(want, sc.fake.VisibilityChanges()); diff != "" {
		t.Errorf("visibility changes (-want +got):\n%s", diff)
	}
	sc.s.Schedule(sc.ctx, uncapped(sc.msg(t, sc.urlA, 1)))
	if n := len(sc.fake.VisibilityChanges()); n != 1 {
		t.Errorf("%d visibility changes after an uncapped Schedule with the backoff off, want still 1", n)
	}
}
