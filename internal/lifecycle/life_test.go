package lifecycle

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling/types"

	"github.com/drainpipe/drainpipe/test/awsfake"
)

// A terminate action lasts at most its hook's global timeout: the longest
// of the group's terminating hooks (the ones named, when names are given),
// never more than 48 h; launch hooks do not count.
func TestActionLife(t *testing.T) {
	c, fake, ctx := setup(t)
	fake.AddLifecycleHook(awsfake.LifecycleHook{ASG: "g", Name: "drain", HeartbeatTimeout: time.Minute})
	fake.AddLifecycleHook(awsfake.LifecycleHook{ASG: "g", Name: "other", HeartbeatTimeout: 2 * time.Minute})
	fake.AddLifecycleHook(awsfake.LifecycleHook{ASG: "g", Name: "launch", HeartbeatTimeout: time.Hour,
		Transition: "autoscaling:EC2_INSTANCE_LAUNCHING"})
	fake.AddLifecycleHook(awsfake.LifecycleHook{ASG: "long", Name: "drain", HeartbeatTimeout: 2 * time.Hour})
	for _, tc := range []struct {
		asg   string
		names []string
		want  time.Duration
	}{
		{"g", []string{"drain"}, 100 * time.Minute},
		{"g", nil, 200 * time.Minute},
		{"g", []string{"drain", "launch"}, 100 * time.Minute},
		{"long", nil, MaxActionLife},
	} {
		if d, err := c.ActionLife(ctx, tc.asg, tc.names); err != nil || d != tc.want {
			t.Errorf("ActionLife(%s, %v) = %s, %v; want %s", tc.asg, tc.names, d, err, tc.want)
		}
	}
	for _, names := range [][]string{{"launch"}, {"nosuch"}} {
		if _, err := c.ActionLife(ctx, "g", names); err == nil || !strings.Contains(err.Error(), "no terminating hook") {
			t.Errorf("ActionLife(g, %v) = %v, want no terminating hook", names, err)
		}
	}
	fake.Inject("DescribeLifecycleHooks", awsfake.AccessDenied, 1)
	if _, err := c.ActionLife(ctx, "g", nil); err == nil {
		t.Error("ActionLife with describing denied: no error")
	}
}

// hooksAnswer answers DescribeLifecycleHooks with its hooks, as Auto
// Scaling may: GlobalTimeout left out.
type hooksAnswer []types.LifecycleHook

func (h hooksAnswer) DescribeLifecycleHooks(context.Context, *autoscaling.DescribeLifecycleHooksInput, ...func(*autoscaling.Options)) (*autoscaling.DescribeLifecycleHooksOutput, error) {
	return &autoscaling.DescribeLifecycleHooksOutput{LifecycleHooks: h}, nil
}

func TestActionLifeWithoutGlobalTimeout(t *testing.T) {
	terminating := aws.String("autoscaling:EC2_INSTANCE_TERMINATING")
	for _, tc := range []struct {
		name string
		hook types.LifecycleHook
		want time.Duration
	}{
		{"a hundred heartbeats", types.LifecycleHook{HeartbeatTimeout: aws.Int32(60)}, 100 * time.Minute},
		{"global timeout 0: a hundred heartbeats", types.LifecycleHook{HeartbeatTimeout: aws.Int32(60), GlobalTimeout: aws.Int32(0)}, 100 * time.Minute},
		{"global timeout", types.LifecycleHook{HeartbeatTimeout: aws.Int32(60), GlobalTimeout: aws.Int32(1)}, time.Second},
		{"nothing known", types.LifecycleHook{HeartbeatTimeout: aws.Int32(0)}, MaxActionLife},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.hook.LifecycleHookName, tc.hook.LifecycleTransition = aws.String("h"), terminating
			c := &Client{timeouts: &timeouts{api: hooksAnswer{tc.hook}}}
			if d, err := c.ActionLife(context.Background(), "g", nil); err != nil || d != tc.want {
				t.Errorf("ActionLife = %s, %v; want %s", d, err, tc.want)
			}
		})
	}
	if _, err := (&Client{}).ActionLife(context.Background(), "g", nil); err == nil {
		t.Error("ActionLife of a client that cannot describe hooks: no error")
	}
}

// A hook's timeout is remembered 15 minutes, a failure to read it one.
func TestCachedTimeoutFreshness(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name string
		c    cachedTimeout
		want bool
	}{
		{"timeout just read", cached(time.Minute, nil, now), true},
		{"timeout read 14 minutes ago", cached(time.Minute, nil, now.Add(-14*time.Minute)), true},
		{"timeout read 16 minutes ago", cached(time.Minute, nil, now.Add(-16*time.Minute)), false},
		{"failure just now", cached(0, context.DeadlineExceeded, now), true},
		{"failure two minutes ago", cached(0, context.DeadlineExceeded, now.Add(-2*time.Minute)), false},
	} {
		if got := tc.c.fresh(); got != tc.want {
			t.Errorf("%s: fresh = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A lookup cut short by its caller's own deadline is not remembered: the
// next caller asks Auto Scaling afresh.
func TestOwnDeadlineIsNotCached(t *testing.T) {
	c, fake, ctx := setup(t)
	fake.AddLifecycleHook(awsfake.LifecycleHook{ASG: "g", Name: "h", HeartbeatTimeout: 45 * time.Second})
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.HeartbeatTimeout(done, "g", "h"); err == nil {
		t.Fatal("HeartbeatTimeout with its context ended: no error")
	}
	if d, err := c.HeartbeatTimeout(ctx, "g", "h"); err != nil || d != 45*time.Second {
		t.Errorf("HeartbeatTimeout after a cancelled lookup = %s, %v; want 45s", d, err)
	}
}
