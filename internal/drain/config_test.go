package drain

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// Zero or negative numeric fields take their defaults; a value given is
// kept, however small; the backoff's ceiling is never below its start.
func TestConfigDefaultsFillOnlyUnsetFields(t *testing.T) {
	defaults := Config{
		Concurrency: DefaultConcurrency, TaintEffect: "NoSchedule", SafetyMargin: DefaultSafetyMargin,
		CriticalReserve: DefaultCriticalReserve, StuckAfter: DefaultStuckAfter,
		BackoffInitial: DefaultBackoffInitial, BackoffMax: DefaultBackoffMax,
	}
	withBackoff := func(initial, most time.Duration) Config {
		c := defaults
		c.BackoffInitial, c.BackoffMax = initial, most
		return c
	}
	tests := []struct {
		name string
		in   Config
		want Config
	}{
		{"zero takes the defaults", Config{}, defaults},
		{"negative takes the defaults", Config{Concurrency: -1, SafetyMargin: -time.Second, CriticalReserve: -time.Second,
			StuckAfter: -time.Second, BackoffInitial: -time.Second, BackoffMax: -time.Second}, defaults},
		{"given values are kept", Config{Concurrency: 1, TaintEffect: "PreferNoSchedule", SafetyMargin: time.Nanosecond,
			CriticalReserve: time.Nanosecond, StuckAfter: time.Nanosecond, BackoffInitial: time.Nanosecond, BackoffMax: time.Nanosecond},
			Config{Concurrency: 1, TaintEffect: "PreferNoSchedule", SafetyMargin: time.Nanosecond,
				CriticalReserve: time.Nanosecond, StuckAfter: time.Nanosecond, BackoffInitial: time.Nanosecond, BackoffMax: time.Nanosecond}},
		{"a ceiling below the start is raised to it", Config{BackoffInitial: 5 * time.Second, BackoffMax: time.Second},
			withBackoff(5*time.Second, 5*time.Second)},
		{"the default ceiling below a given start is raised to it", Config{BackoffInitial: 10 * time.Second},
			withBackoff(10*time.Second, 10*time.Second)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.in.withDefaults()
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(Config{}, "Announce", "OnEvent")); diff != "" {
				t.Errorf("withDefaults mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
