package pipeline

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/google/go-cmp/cmp"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/instance"
	"github.com/drainpipe/drainpipe/internal/lifecycle"
	"github.com/drainpipe/drainpipe/internal/policy"
	"github.com/drainpipe/drainpipe/test/awsfake"
)

// signalingHooks is the real lifecycle client, telling each heartbeat.
type signalingHooks struct {
	*lifecycle.Client
	beat chan struct{}
}

func (s signalingHooks) Heartbeat(ctx context.Context, l event.Lifecycle) error {
	err := s.Client.Heartbeat(ctx, l)
	s.beat <- struct{}{}
	return err
}

// Against the Auto Scaling fake, which expires an action whose heartbeat
// timeout passes without a heartbeat, on one clock: a 30 s hook is kept
// alive through 40 s of another task's drain while its own task is queued.
func TestKeepAliveAgainstExpiringActions(t *testing.T) {
	const second = "i-0fedcba9876543210"
	clock := &fakeClock{now: t0, made: make(chan *fakeTicker, 1)}
	fake := awsfake.New()
	defer fake.Close()
	fake.SetClock(clock.Now)
	fake.AddLifecycleHook(awsfake.LifecycleHook{ASG: "prod-workers", Name: "drain", HeartbeatTimeout: 30 * time.Second})
	first := task(policy.ActionCordonAndDrain, 1, hookOn(instID, "prod-workers", "tok-1", t0))
	queued := handler.Task{InstanceID: second, Action: policy.ActionCordonAndDrain, ReceiveCount: 1,
		Interruptions: []event.Interruption{hookOn(second, "prod-workers", "tok-2", t0)}}
	var actions []awsfake.LifecycleAction
	for _, tk := range []handler.Task{first, queued} {
		l := tk.Interruptions[0].Lifecycle
		a := awsfake.LifecycleAction{ASG: l.ASG, Hook: l.Hook, Token: l.Token, InstanceID: l.InstanceID}
		fake.AddLifecycleAction(a)
		actions = append(actions, a)
	}
	hooks := signalingHooks{Client: lifecycle.New(autoscaling.NewFromConfig(fake.Config())), beat: make(chan struct{}, 2)}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var ticker *fakeTicker
	blocked := &fakeDrainer{report: drain.Report{BlockedByPDB: []string{"shop/db-1"}}, during: func(ctx context.Context) {
		for ticker != nil && clock.Now().Before(t0.Add(40*time.Second)) {
			clock.advance(10 * time.Second)
			select {
			case ticker.c <- clock.Now():
			case <-ctx.Done():
				return
			}
			recv(ctx, hooks.beat)
			recv(ctx, hooks.beat)
		}
	}}
	second2 := ourInstance()
	second2.ID = second
	a, err := New(Config{}, Deps{
		Instances: &fakeInstances{known: map[string]instance.Instance{instID: ourInstance(), second: second2}},
		Clusters:  fakeClusters{}, FindNode: finder(map[string]string{instID: nodeName, second: "ip-10-0-1-24"}, nil),
		NewDrainer: blocked.factory, Hooks: hooks, Clock: clock,
	})
	if err != nil {
		t.Fatal(err)
	}

	a.Prepare(ctx, []handler.Task{first, queued})
	recv(ctx, hooks.beat)
	recv(ctx, hooks.beat)
	ticker, _ = recv(ctx, clock.made)
	if ticker == nil || ticker.every != 10*time.Second {
		t.Fatalf("keep-alive ticker = %+v, want one every 10 s", ticker)
	}
	for _, tk := range []handler.Task{first, queued} {
		if got := a.Act(ctx, tk); got.Status != handler.StatusRetry {
			t.Errorf("Act(%s) = {%s %q}, want retry", tk.InstanceID, statusName(got.Status), got.Reason)
		}
	}

	if got := fake.Completed(); len(got) != 0 {
		t.Errorf("actions ended at %s: %+v", clock.Now().Sub(t0), got)
	}
	if diff := cmp.Diff(actions, fake.Pending()); diff != "" {
		t.Errorf("pending actions (-want +got):\n%s", diff)
	}
	clock.advance(31 * time.Second) // nothing heartbeats them any more
	if got := fake.Completed(); len(got) != 2 || !got[0].Expired {
		t.Errorf("actions after 31 s without heartbeat = %+v, want both expired", got)
	}
}
