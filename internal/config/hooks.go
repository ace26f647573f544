package config

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Hooks configures how lifecycle hooks are kept alive and completed.
type Hooks struct {
	// Reserve is kept free at the end of each task's time for completing
	// its hooks (with retries): the drain stops this long before.
	Reserve time.Duration
	// HeartbeatCap is the longest interval between heartbeats; hooks are
	// heartbeated every third of their heartbeat timeout, at most this.
	HeartbeatCap time.Duration
	// ASGNames and ASGNamePrefix are the Auto Scaling groups whose hooks
	// are served; both empty serves every group (local runs).
	ASGNames      []string
	ASGNamePrefix string
	// HookNames are the lifecycle hooks Drainpipe owns, by name; other
	// hooks of a served group are left to their owner. Empty serves every
	// hook (local runs; the stack sets it).
	HookNames []string
	// LaunchWaitReady completes a launch hook only once the instance's
	// node is Ready (or on its last delivery); false completes it at once.
	LaunchWaitReady bool
}

// Hook defaults and bounds. A heartbeat cap above 25 s could let a hook
// with the smallest heartbeat timeout (30 s) expire on one late call.
const (
	DefaultHookReserve  = 5 * time.Second
	DefaultHeartbeatCap = 25 * time.Second
	maxHeartbeatCap     = 25 * time.Second
)

// asgName is an Auto Scaling group name: 1–255 characters, no colon
// (which marks an ARN) or control characters.
var asgName = pattern{regexp.MustCompile(`^[^:\x00-\x1f]+$`), 255}

// hookName is Auto Scaling's constraint on lifecycle hook names.
var hookName = pattern{regexp.MustCompile(`^[A-Za-z0-9_/-]+$`), 255}

func defaultHooks() Hooks {
	return Hooks{Reserve: DefaultHookReserve, HeartbeatCap: DefaultHeartbeatCap, LaunchWaitReady: true}
}

// hooks reads the DRAINPIPE_HOOK_RESERVE, DRAINPIPE_HEARTBEAT_CAP,
// DRAINPIPE_ASG_NAMES, DRAINPIPE_ASG_NAME_PREFIX,
// DRAINPIPE_LIFECYCLE_HOOK_NAMES and DRAINPIPE_LAUNCH_WAIT_READY variables.
func (r *reader) hooks(h *Hooks) {
	r.boolean("LAUNCH_WAIT_READY", &h.LaunchWaitReady)
	r.parse("HOOK_RESERVE", func(v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Second {
			return fmt.Errorf("want a duration of at least 1s, such as 10s, got %q", v)
		}
		h.Reserve = d
		return nil
	})
	r.parse("HEARTBEAT_CAP", func(v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Second || d > maxHeartbeatCap {
			return fmt.Errorf("want a duration from 1s to %s, got %q", maxHeartbeatCap, v)
		}
		h.HeartbeatCap = d
		return nil
	})
	r.parse("ASG_NAMES", func(v string) error {
		for _, n := range strings.Split(v, ",") {
			if n = strings.TrimSpace(n); n == "" {
				continue
			}
			if !asgName.MatchString(n) {
				return fmt.Errorf("malformed Auto Scaling group name %q", n)
			}
			h.ASGNames = append(h.ASGNames, n)
		}
		return nil
	})
	r.parse("LIFECYCLE_HOOK_NAMES", func(v string) error {
		for _, n := range strings.Split(v, ",") {
			if n = strings.TrimSpace(n); n == "" {
				continue
			}
			if !hookName.MatchString(n) {
				return fmt.Errorf("malformed lifecycle hook name %q", n)
			}
			h.HookNames = append(h.HookNames, n)
		}
		return nil
	})
	r.parse("ASG_NAME_PREFIX", func(v string) error {
		if !asgName.MatchString(v) {
			return fmt.Errorf("malformed Auto Scaling group name prefix %q", v)
		}
		h.ASGNamePrefix = v
		return nil
	})
}
