package pipeline

import (
	"strings"
	"testing"
	"time"
)

// Zero settings take their defaults (a negative poll too), set ones are
// kept, and impossible ones are all named at once.
func TestConfigDefaults(t *testing.T) {
	c, err := Config{LaunchPoll: -time.Second}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxReceiveCount != DefaultMaxReceiveCount || c.HookReserve != DefaultHookReserve ||
		c.HeartbeatInterval != DefaultHeartbeatInterval || c.MaxHookAge != DefaultMaxHookAge ||
		c.CompleteBackoff != DefaultCompleteBackoff || c.LaunchPoll != DefaultLaunchPoll || c.StoppedWait != DefaultStoppedWait {
		t.Errorf("zero Config with defaults = %+v", c)
	}
	if c, _ := (Config{}).withDefaults(); c.LaunchPoll != DefaultLaunchPoll {
		t.Errorf("zero launch poll became %v, want %v", c.LaunchPoll, DefaultLaunchPoll)
	}
	set := Config{MaxReceiveCount: 1, HookReserve: time.Second, HeartbeatInterval: 2 * time.Second, MaxHookAge: time.Hour,
		CompleteBackoff: time.Millisecond, LaunchPoll: time.Millisecond, StoppedWait: time.Minute}
	if got, err := set.withDefaults(); err != nil || got.MaxReceiveCount != 1 || got.HookReserve != time.Second ||
		got.HeartbeatInterval != 2*time.Second || got.MaxHookAge != time.Hour || got.CompleteBackoff != time.Millisecond ||
		got.LaunchPoll != time.Millisecond || got.StoppedWait != time.Minute {
		t.Errorf("set Config with defaults = %+v, %v; want it kept", got, err)
	}
	_, err = Config{MaxReceiveCount: -1, MaxEventAge: -1, HookReserve: -1, HeartbeatInterval: -1, MaxHookAge: -1, SafetyMargin: -1}.withDefaults()
	if err == nil {
		t.Fatal("negative settings accepted")
	}
	for _, want := range []string{"max receive count -1 is below 1", "max event age", "hook reserve", "heartbeat interval",
		"max hook age", "safety margin"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
}
