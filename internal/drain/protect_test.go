package drain

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestProtection(t *testing.T) {
	start := time.Date(2026, 11, 25, 1, 0, 0, 0, time.UTC)
	now := start.Add(time.Hour)
	tests := []struct {
		value     string
		set       bool
		want      bool
		wantUntil time.Time
	}{
		{set: false},
		{"true", true, true, time.Time{}},
		{"false", true, false, time.Time{}},
		{"2h", true, true, start.Add(2 * time.Hour)},
		{"30m", true, false, start.Add(30 * time.Minute)},
		{"0s", true, false, start}, // protected for no time at all
		{"-1m", true, true, time.Time{}},
		{"soon", true, true, time.Time{}}, // unreadable: kept, for ever
	}
	for _, tt := range tests {
		p := pod("a", func(p *corev1.Pod) { p.Status.StartTime = &metav1.Time{Time: start} })
		if tt.set {
			p.Annotations = map[string]string{AnnotationDoNotDisrupt: tt.value}
		}
		got, until := protection(&p, now)
		if got != tt.want || !until.Equal(tt.wantUntil) {
			t.Errorf("protection(%q) = %v, %v; want %v, %v", tt.value, got, until, tt.want, tt.wantUntil)
		}
	}
	// Spot: 120 s left, 30 s grace, 5 s margin: deleted 85 s after the warning.
	if got, want := deleteProtectedAt(now.Add(2*time.Minute), 30, 5*time.Second), now.Add(85*time.Second); !got.Equal(want) {
		t.Errorf("deleteProtectedAt = %v, want %v", got, want)
	}
}
