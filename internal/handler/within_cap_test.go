package handler

import (
	"testing"
	"time"
)

// The tighter of two caps wins; zero is no cap.
func TestSoonerWithin(t *testing.T) {
	s := time.Second
	for _, tt := range []struct{ a, b, want time.Duration }{
		{0, 0, 0}, {0, 3 * s, 3 * s}, {3 * s, 0, 3 * s}, {3 * s, 2 * s, 2 * s}, {2 * s, 3 * s, 2 * s},
	} {
		if got := SoonerWithin(tt.a, tt.b); got != tt.want {
			t.Errorf("SoonerWithin(%s, %s) = %s, want %s", tt.a, tt.b, got, tt.want)
		}
	}
}
