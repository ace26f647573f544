package config

import (
	"fmt"
	"time"
)

// MaxNoticePeriod bounds DRAINPIPE_NOTICE_PERIOD: a notice holds a drain
// (and, on a hook, the instance) that long.
const MaxNoticePeriod = time.Hour

// Drains configures what drains tell the workloads.
type Drains struct {
	// NoticePeriod is how long pods annotated drainpipe.dev/notice=true
	// are warned before their eviction (bounded by the instance's
	// deadline less their grace); 0: no notice.
	NoticePeriod time.Duration
	// WarnAll: every pod to be evicted is warned, not only those that ask
	// (DRAINPIPE_WARN_PODS=all).
	WarnAll bool
	// GraceCap caps every pod's grace period (NTH's
	// podTerminationGracePeriod); 0: each pod's own.
	GraceCap time.Duration
}

func (r *reader) loadDrains(c *Drains) {
	r.parse("WARN_PODS", func(v string) error {
		switch v {
		case "all":
			c.WarnAll = true
		case "opted-in":
			c.WarnAll = false
		default:
			return fmt.Errorf("want all or opted-in, got %q", v)
		}
		return nil
	})
	r.durationUpTo("NOTICE_PERIOD", "30s", MaxNoticePeriod, &c.NoticePeriod)
	r.parse("POD_GRACE_CAP", func(v string) error {
		d, err := time.ParseDuration(v)
		switch {
		case err != nil:
			return fmt.Errorf("want a duration such as 60s, got %q", v)
		case d != 0 && d < time.Second:
			return fmt.Errorf("%s: want 0 (no cap) or at least 1s: a grace of 0 deletes the pod at once", d)
		}
		c.GraceCap = d.Round(time.Second)
		return nil
	})
}
