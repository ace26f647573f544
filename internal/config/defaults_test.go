package config

import (
	"strings"
	"testing"
	"time"
)

// The durations Default gives are the ones the configuration reference
// documents.
func TestDefaultDurationsAreTheDocumentedOnes(t *testing.T) {
	d := Default()
	got := map[string]time.Duration{
		"RETRY_DELAY": d.RetryDelay, "GIVE_WAY_AFTER": d.GiveWayAfter, "MAX_EVENT_AGE": d.MaxEventAge,
		"DEADLINE_RESERVE": d.DeadlineReserve, "SAFETY_MARGIN": d.SafetyMargin, "STUCK_POD_TIMEOUT": d.StuckPodTimeout,
		"HOOK_RESERVE": d.Hooks.Reserve, "HEARTBEAT_CAP": d.Hooks.HeartbeatCap, "REBALANCE_HOLD": d.Return.RebalanceHold,
		"SWEEP_MARGIN": d.Return.SweepMargin, "GROUP_LEASE_DURATION": d.Groups.LeaseDuration,
	}
	for _, s := range Settings() {
		have, ok := got[s.Name]
		if !ok {
			continue
		}
		delete(got, s.Name)
		want, err := time.ParseDuration(strings.Trim(s.Default, "`"))
		if err != nil || have != want {
			t.Errorf("%s: Default gives %s, the reference says %s (%v)", s.Name, have, s.Default, err)
		}
	}
	for name := range got {
		t.Errorf("%s is not in the settings table", name)
	}
}
