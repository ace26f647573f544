package lifecycle

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/google/go-cmp/cmp"

	"github.com/drainpipe/drainpipe/internal/awserr"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/test/awsfake"
)

var hook = event.Lifecycle{
	ASG:        "workers",
	Hook:       "drain",
	Token:      "8e6d2a3c-6d1b-4b8e-9d7e-0c6f1a2b3c4d",
	Transition: "autoscaling:EC2_INSTANCE_TERMINATING",
	InstanceID: "i-0123456789abcdef0",
}

func setup(t *testing.T) (*Client, *awsfake.Server, context.Context) {
	t.Helper()
	fake := awsfake.New()
	t.Cleanup(fake.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return New(autoscaling.NewFromConfig(fake.Config())), fake, ctx
}

func pending(l event.Lifecycle) awsfake.LifecycleAction {
	return awsfake.LifecycleAction{ASG: l.ASG, Hook: l.Hook, Token: l.Token, InstanceID: l.InstanceID}
}

func TestComplete(t *testing.T) {
	tests := []struct {
		name          string
		active        bool
		fault         awsfake.Fault
		times         int
		wantDone      bool
		wantClass     error // nil with wantErr false: success
		wantErr       bool
		wantCalls     int
		wantCompleted int
	}{
		{name: "active action completes", active: true, wantCalls: 1, wantCompleted: 1},
		{name: "already completed", active: false, wantDone: true, wantCalls: 1},
		{name: "injected no-active answer", active: true, fault: awsfake.NoActiveLifecycleAction, times: 1, wantDone: true, wantCalls: 1},
		{name: "throttled twice then completes", active: true, fault: awsfake.Throttle, times: 2, wantCalls: 3, wantCompleted: 1},
		{name: "access denied", active: true, fault: awsfake.AccessDenied, times: 1, wantErr: true, wantClass: awserr.ErrAccessDenied, wantCalls: 1},
		{name: "throttled beyond retries", active: true, fault: awsfake.Throttle, times: -1, wantErr: true, wantClass: awserr.ErrThrottled, wantCalls: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, fake, ctx := setup(t)
			if tt.active {
				fake.AddLifecycleAction(pending(hook))
			}
			if tt.fault != 0 {
				fake.Inject("CompleteLifecycleAction", tt.fault, tt.times)
			}

			done, err := c.Complete(ctx, hook)

			if (err != nil) != tt.wantErr {
				t.Fatalf("Complete() error = %v, wantErr %v", err, tt.wantErr)
			}
			if class := awserr.Class(err); class != tt.wantClass {
				t.Errorf("error class = %v, want %v (err %v)", class, tt.wantClass, err)
			}
			if done != tt.wantDone {
				t.Errorf("alreadyDone = %v, want %v", done, tt.wantDone)
			}
			calls := fake.CallsTo("CompleteLifecycleAction")
			if len(calls) != tt.wantCalls {
				t.Errorf("calls = %d, want %d", len(calls), tt.wantCalls)
			}
			if n := len(fake.Completed()); n != tt.wantCompleted {
				t.Errorf("completed actions = %d, want %d", n, tt.wantCompleted)
			}
			got := map[string]string{}
			for _, k := range []string{"AutoScalingGroupName", "LifecycleHookName", "LifecycleActionResult", "LifecycleActionToken", "InstanceId"} {
				got[k] = calls[0].Params.Get(k)
			}
			want := map[string]string{"AutoScalingGroupName": "workers", "LifecycleHookName": "drain",
				"LifecycleActionResult": "CONTINUE", "LifecycleActionToken": hook.Token, "InstanceId": hook.InstanceID}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("request params mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHeartbeat(t *testing.T) {
	c, fake, ctx := setup(t)
	fake.AddLifecycleAction(pending(hook))

	if err := c.Heartbeat(ctx, hook); err != nil {
		t.Fatalf("Heartbeat(active) = %v, want nil", err)
	}
	if _, err := c.Complete(ctx, hook); err != nil {
		t.Fatal(err)
	}
	err := c.Heartbeat(ctx, hook)
	if !errors.Is(err, ErrInactive) {
		t.Errorf("Heartbeat(completed) = %v, want ErrInactive", err)
	}
	if n := len(fake.CallsTo("RecordLifecycleActionHeartbeat")); n != 2 {
		t.Errorf("heartbeat calls = %d, want 2", n)
	}

	fake.Inject("RecordLifecycleActionHeartbeat", awsfake.AccessDenied, 1)
	if err := c.Heartbeat(ctx, hook); !errors.Is(err, awserr.ErrAccessDenied) {
		t.Errorf("Heartbeat(denied) = %v, want ErrAccessDenied", err)
	}
}

func TestCompleteByInstanceIDOnly(t *testing.T) {
	c, fake, ctx := setup(t)
	l := hook
	l.Token = ""
	fake.AddLifecycleAction(pending(hook))
	if done, err := c.Complete(ctx, l); done || err != nil {
		t.Fatalf("Complete() = (%v, %v), want (false, nil)", done, err)
	}
	if fake.CallsTo("CompleteLifecycleAction")[0].Params.Has("LifecycleActionToken") {
		t.Error("an empty token was sent")
	}
}

func TestRejectsIncompleteAction(t *testing.T) {
	c, fake, ctx := setup(t)
	for _, l := range []event.Lifecycle{
		{Hook: "drain", Token: "t"},
		{ASG: "workers", Token: "t"},
		{ASG: "workers", Hook: "drain"},
	} {
		if _, err := c.Complete(ctx, l); err == nil {
			t.Errorf("Complete(%+v) error = nil, want a validation error", l)
		}
		if err := c.Heartbeat(ctx, l); err == nil {
			t.Errorf("Heartbeat(%+v) error = nil, want a validation error", l)
		}
	}
	if n := len(fake.Calls()); n != 0 {
		t.Errorf("calls = %d, want none for invalid input", n)
	}
}
