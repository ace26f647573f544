package awsfake

import (
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/google/go-cmp/cmp"
)

// testClock is a settable clock for the fake.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// An action lives while heartbeats come within the hook's heartbeat
// timeout, then expires with the default result, as Auto Scaling's do.
func TestLifecycleActionExpiresWithoutHeartbeat(t *testing.T) {
	s, ctx := setup(t)
	t0 := time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)
	clock := &testClock{now: t0}
	s.SetClock(clock.Now)
	s.AddLifecycleHook(LifecycleHook{ASG: "g", Name: "h", HeartbeatTimeout: 30 * time.Second})
	a := LifecycleAction{ASG: "g", Hook: "h", Token: "tok", InstanceID: "i-0000000000000000a"}
	s.AddLifecycleAction(a)
	asg := autoscaling.NewFromConfig(s.Config())
	beat := func() error {
		_, err := asg.RecordLifecycleActionHeartbeat(ctx, &autoscaling.RecordLifecycleActionHeartbeatInput{
			AutoScalingGroupName: aws.String("g"), LifecycleHookName: aws.String("h"), LifecycleActionToken: aws.String("tok")})
		return err
	}

	clock.advance(29 * time.Second)
	if err := beat(); err != nil {
		t.Fatalf("heartbeat within the timeout: %v", err)
	}
	clock.advance(29 * time.Second) // 58 s after the start, 29 s after the heartbeat
	if err := beat(); err != nil {
		t.Fatalf("heartbeat within the renewed timeout: %v", err)
	}
	clock.advance(30 * time.Second)
	if err := beat(); code(err) != "ValidationError" {
		t.Errorf("heartbeat after the timeout: error = %v, want ValidationError", err)
	}
	want := []Completion{{LifecycleAction: a, Result: "ABANDON", Expired: true}}
	if diff := cmp.Diff(want, s.Completed()); diff != "" {
		t.Errorf("completions (-want +got):\n%s", diff)
	}
	wantCalls := []HookCall{
		{LifecycleAction: a, Op: OpHeartbeat, Time: t0.Add(29 * time.Second)},
		{LifecycleAction: a, Op: OpHeartbeat, Time: t0.Add(58 * time.Second)},
		{LifecycleAction: a, Op: OpExpire, Result: "ABANDON", Time: t0.Add(88 * time.Second)},
	}
	if diff := cmp.Diff(wantCalls, s.HookCalls()); diff != "" {
		t.Errorf("hook calls (-want +got):\n%s", diff)
	}
	if len(s.Pending()) != 0 {
		t.Errorf("pending = %v, want none", s.Pending())
	}
}

// Heartbeats cannot keep an action past its global timeout.
func TestLifecycleActionGlobalTimeout(t *testing.T) {
	s, _ := setup(t)
	clock := &testClock{now: time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)}
	s.SetClock(clock.Now)
	s.AddLifecycleHook(LifecycleHook{ASG: "g", Name: "h", HeartbeatTimeout: 30 * time.Second, DefaultResult: "CONTINUE"})
	s.AddLifecycleAction(LifecycleAction{ASG: "g", Hook: "h", Token: "tok"})
	for range 100 {
		clock.advance(30*time.Second - time.Millisecond)
		s.mu.Lock()
		s.touchLocked(s.actions[0], "RecordLifecycleActionHeartbeat", "")
		s.mu.Unlock()
	}
	clock.advance(time.Second) // 100 × 29.999 s + 1 s > 50 min, the global timeout
	if got := s.Completed(); len(got) != 1 || got[0].Result != "CONTINUE" || !got[0].Expired {
		t.Errorf("completions = %+v, want the action expired with CONTINUE", got)
	}
}

// DescribeLifecycleHooks reports the hook's timeouts and default result.
func TestDescribeLifecycleHooks(t *testing.T) {
	s, ctx := setup(t)
	s.AddLifecycleHook(LifecycleHook{ASG: "g", Name: "h", HeartbeatTimeout: 30 * time.Second})
	s.AddLifecycleHook(LifecycleHook{ASG: "g", Name: "other"})
	out, err := autoscaling.NewFromConfig(s.Config()).DescribeLifecycleHooks(ctx, &autoscaling.DescribeLifecycleHooksInput{
		AutoScalingGroupName: aws.String("g"), LifecycleHookNames: []string{"h"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.LifecycleHooks) != 1 {
		t.Fatalf("hooks = %d, want 1", len(out.LifecycleHooks))
	}
	h := out.LifecycleHooks[0]
	got := []any{aws.ToString(h.LifecycleHookName), aws.ToInt32(h.HeartbeatTimeout), aws.ToInt32(h.GlobalTimeout),
		aws.ToString(h.DefaultResult), aws.ToString(h.LifecycleTransition)}
	want := []any{"h", int32(30), int32(3000), "ABANDON", "autoscaling:EC2_INSTANCE_TERMINATING"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("hook (-want +got):\n%s", diff)
	}
}
