package lifecycle

import (
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/test/awsfake"
)

// A hook's heartbeat timeout is asked of Auto Scaling once per group and
// hook, then served from the cache; an unknown hook is an error, also
// remembered for a while.
func TestHeartbeatTimeoutCached(t *testing.T) {
	c, fake, ctx := setup(t)
	fake.AddLifecycleHook(awsfake.LifecycleHook{ASG: "g", Name: "h", HeartbeatTimeout: 45 * time.Second})
	for range 2 {
		d, err := c.HeartbeatTimeout(ctx, "g", "h")
		if err != nil || d != 45*time.Second {
			t.Errorf("HeartbeatTimeout = %s, %v; want 45s", d, err)
		}
	}
	if n := len(fake.CallsTo("DescribeLifecycleHooks")); n != 1 {
		t.Errorf("DescribeLifecycleHooks calls = %d, want 1", n)
	}
	for range 2 {
		if _, err := c.HeartbeatTimeout(ctx, "g", "other"); err == nil {
			t.Error("HeartbeatTimeout of an unknown hook: no error")
		}
	}
	if n := len(fake.CallsTo("DescribeLifecycleHooks")); n != 2 {
		t.Errorf("DescribeLifecycleHooks calls = %d, want 2 (a failure is remembered too)", n)
	}
}
