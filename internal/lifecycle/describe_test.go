package lifecycle

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/autoscaling"

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

// gatedDescribe holds every lookup until release closes, telling arrived.
type gatedDescribe struct {
	describeAPI
	arrived chan struct{}
	release chan struct{}
}

func (g gatedDescribe) DescribeLifecycleHooks(ctx context.Context, in *autoscaling.DescribeLifecycleHooksInput, optFns ...func(*autoscaling.Options)) (*autoscaling.DescribeLifecycleHooksOutput, error) {
	g.arrived <- struct{}{}
	<-g.release
	return g.describeAPI.DescribeLifecycleHooks(ctx, in, optFns...)
}

// Callers asking for the same hook while its lookup is under way wait for
// that lookup (a batch's hooks are prepared at once): one call to Auto
// Scaling, one answer for all.
func TestHeartbeatTimeoutAskedOnceAtOnce(t *testing.T) {
	c, fake, ctx := setup(t)
	fake.AddLifecycleHook(awsfake.LifecycleHook{ASG: "g", Name: "h", HeartbeatTimeout: 45 * time.Second})
	gate := gatedDescribe{describeAPI: c.timeouts.api, arrived: make(chan struct{}, 5), release: make(chan struct{})}
	c.timeouts.api = gate
	joined := make(chan struct{}, 5)
	c.timeouts.joined = func() { joined <- struct{}{} }
	const callers = 5
	got := make(chan time.Duration, callers)
	for range callers {
		go func() {
			d, err := c.HeartbeatTimeout(ctx, "g", "h")
			if err != nil {
				t.Errorf("HeartbeatTimeout: %v", err)
			}
			got <- d
		}()
	}
	bound := time.NewTimer(10 * time.Second) // only so a failure does not hang
	defer bound.Stop()
	for lookups, waits := 0, 0; lookups+waits < callers; {
		select {
		case <-gate.arrived:
			lookups++
		case <-joined:
			waits++
		case <-bound.C:
			close(gate.release)
			t.Fatalf("%d lookups and %d waiting callers of %d", lookups, waits, callers)
		}
	}
	close(gate.release)
	for range callers {
		if d := <-got; d != 45*time.Second {
			t.Errorf("HeartbeatTimeout = %s, want 45s", d)
		}
	}
	if n := len(fake.CallsTo("DescribeLifecycleHooks")); n != 1 {
		t.Errorf("DescribeLifecycleHooks calls = %d, want 1", n)
	}
}
