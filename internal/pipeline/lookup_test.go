package pipeline

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/instance"
	"github.com/drainpipe/drainpipe/internal/policy"
)

func batch(ids ...string) []handler.Task {
	var tasks []handler.Task
	for _, id := range ids {
		in := spot(t0)
		in.Instances = []string{id}
		tasks = append(tasks, handler.Task{InstanceID: id, Action: policy.ActionCordonAndDrain,
			Interruptions: []event.Interruption{in}, ReceiveCount: 1})
	}
	return tasks
}

func TestPrepare(t *testing.T) {
	ids := []string{"i-0000000000000000c", "i-0000000000000000a", "i-0000000000000000b"}
	known := map[string]instance.Instance{}
	nodes := map[string]string{}
	for _, id := range ids {
		known[id] = instance.Instance{ID: id, State: "running", Cluster: "prod", Lifecycle: "spot"}
		nodes[id] = "node-" + id
	}
	tests := []struct {
		name        string
		prepare     bool
		describeErr error
		later       time.Duration // clock advance between Prepare and Act
		wantCalls   [][]string
		wantStatus  handler.Status
	}{{
		name: "prepared batch is described once", prepare: true,
		wantCalls:  [][]string{{ids[1], ids[2], ids[0]}},
		wantStatus: handler.StatusDone,
	}, {
		name:       "without Prepare each task describes its instance",
		wantCalls:  [][]string{{ids[0]}, {ids[1]}, {ids[2]}},
		wantStatus: handler.StatusDone,
	}, {
		name: "a failed batch lookup fails each task without more calls", prepare: true, describeErr: errBoom,
		wantCalls:  [][]string{{ids[1], ids[2], ids[0]}},
		wantStatus: handler.StatusRetry,
	}, {
		name: "expired entries are looked up again", prepare: true, later: 90 * time.Second,
		wantCalls:  [][]string{{ids[1], ids[2], ids[0]}, {ids[0]}, {ids[1]}, {ids[2]}},
		wantStatus: handler.StatusDone,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, rigOpts{instances: known, nodes: nodes, describeErr: tt.describeErr})
			tasks := batch(ids...)
			if tt.prepare {
				r.actor.Prepare(context.Background(), append(tasks, handler.Task{InstanceID: "i-none", Action: policy.ActionNone}))
			}
			r.clock.advance(tt.later)
			for _, tk := range tasks { // sequential, so the calls' order is known
				got := r.actor.Act(context.Background(), tk)
				if got.Status != tt.wantStatus {
					t.Errorf("Act(%s) = {%s %q}, want %s", tk.InstanceID, statusName(got.Status), got.Reason,
						statusName(tt.wantStatus))
				}
				if tt.describeErr != nil && !strings.Contains(got.Reason, "describing 3 instances: boom") {
					t.Errorf("Act(%s) reason = %q, want the batch lookup's error", tk.InstanceID, got.Reason)
				}
			}
			if diff := cmp.Diff(tt.wantCalls, r.instances.calls); diff != "" {
				t.Errorf("Describe calls (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewRejectsMissingDeps(t *testing.T) {
	_, err := New(Config{MaxReceiveCount: -1}, Deps{})
	if err == nil {
		t.Fatal("New with no dependencies succeeded, want an error")
	}
	for _, want := range []string{"missing instances", "missing clusters", "missing node finder",
		"missing drainer factory", "missing hooks", "max receive count -1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

// Prepare heartbeats a batch's hooks and looks its instances up all at
// once: a batch of ten hooked records waited for ten heartbeats one after
// another, then the lookup, before its first cordon. Here every
// heartbeat is held until all of them and the lookup are in flight; one
// after another, they never are.
func TestPrepareHeartbeatsAndLooksUpAtOnce(t *testing.T) {
	ids := []string{"i-0000000000000000a", "i-0000000000000000b", "i-0000000000000000c"}
	known := map[string]instance.Instance{}
	var tasks []handler.Task
	for i, id := range ids {
		known[id] = instance.Instance{ID: id, State: "running", Cluster: "prod"}
		in := lifecycleEvent(t0)
		in.Instances = []string{id}
		in.Lifecycle = &event.Lifecycle{ASG: "prod-workers", Hook: "drain", Token: fmt.Sprintf("tok-%d", i),
			Transition: "autoscaling:EC2_INSTANCE_TERMINATING", InstanceID: id}
		tasks = append(tasks, handler.Task{InstanceID: id, Action: policy.ActionCordonAndDrain,
			Interruptions: []event.Interruption{in}, ReceiveCount: 1})
	}
	hooks := &fakeHooks{beat: make(chan struct{}), hold: make(chan struct{})}
	r := newRig(t, rigOpts{instances: known, hooks: hooks})
	r.instances.called = make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	prepared := make(chan struct{})
	go func() {
		defer close(prepared)
		r.actor.Prepare(ctx, tasks)
	}()
	bound := time.NewTimer(10 * time.Second) // only so a serial Prepare fails instead of hanging
	defer bound.Stop()
	for beats, looked := 0, false; beats < len(ids) || !looked; {
		select {
		case <-hooks.beat:
			beats++
		case <-r.instances.called:
			looked = true
		case <-bound.C:
			cancel()
			for done := false; !done; { // let the serial Prepare run out
				select {
				case <-hooks.beat:
				case <-r.instances.called:
				case <-prepared:
					done = true
				}
			}
			t.Fatalf("%d of %d heartbeats in flight, lookup started %t: Prepare waits on each before the next",
				beats, len(ids), looked)
		}
	}
	close(hooks.hold)
	<-prepared
}

// A batch's cordons do not wait for its hooks' first heartbeats: Prepare
// returns once the lookup is in, and a first delivery's drain starts while
// its hook's heartbeat is still unanswered (it was up to 75 ms of a
// hooked batch's cordon in the 200-node wave). The hook is completed only
// once that heartbeat is answered: none follows its completion.
func TestCordonDoesNotWaitForHeartbeats(t *testing.T) {
	hooks := &fakeHooks{beat: make(chan struct{}, 1), hold: make(chan struct{})}
	ran := make(chan struct{})
	d := &fakeDrainer{report: drain.Report{Done: true}, during: func(context.Context) { close(ran) }}
	r := newRig(t, rigOpts{hooks: hooks, drainer: d})
	tk := task(policy.ActionCordonAndDrain, 1, hookOn(instID, "prod-workers", "tok-1", t0))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	acted := make(chan handler.Result, 1)
	go func() {
		r.actor.Prepare(ctx, []handler.Task{tk})
		acted <- r.actor.Act(ctx, tk)
	}()
	bound := time.NewTimer(10 * time.Second) // only so a waiting Prepare fails instead of hanging
	defer bound.Stop()
	select {
	case <-ran:
	case <-bound.C:
		cancel()
		<-acted
		t.Fatal("the drain waited for the hook's first heartbeat")
	}
	if _, c := hooks.counts(); c != 0 {
		t.Errorf("%d completions before the heartbeat was answered, want none", c)
	}
	close(hooks.hold)
	if got := <-acted; got.Status != handler.StatusDone {
		t.Fatalf("task = {%s %q}, want done", statusName(got.Status), got.Reason)
	}
	if _, c := hooks.counts(); c != 1 {
		t.Errorf("%d completions, want 1", c)
	}
}

// The first heartbeats of a batch's first deliveries follow the batch's
// cordons: they used to come in the control plane's busiest second, with
// the cordons. Each hook still has its heartbeat before its completion.
func TestHeartbeatsFollowTheBatchsCordons(t *testing.T) {
	const second = "i-0fedcba9876543210"
	hooks := &fakeHooks{}
	var mu sync.Mutex
	var beatsAtCordon []int
	d := &fakeDrainer{report: drain.Report{Done: true}, during: func(context.Context) {
		mu.Lock()
		defer mu.Unlock()
		beatsAtCordon = append(beatsAtCordon, hooks.beatsOf("tok-1")+hooks.beatsOf("tok-2"))
	}}
	r := newRig(t, rigOpts{hooks: hooks, drainer: d,
		instances: map[string]instance.Instance{instID: ourInstance(), second: func() instance.Instance {
			in := ourInstance()
			in.ID = second
			return in
		}()},
		nodes: map[string]string{instID: nodeName, second: "ip-10-0-1-24.eu-west-1.compute.internal"}})
	tasks := []handler.Task{task(policy.ActionCordonAndDrain, 1, hookOn(instID, "prod-workers", "tok-1", t0)),
		{InstanceID: second, Action: policy.ActionCordonAndDrain, ReceiveCount: 1,
			Interruptions: []event.Interruption{hookOn(second, "prod-workers", "tok-2", t0)}}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r.actor.Prepare(ctx, tasks)
	var wg sync.WaitGroup
	for _, tk := range tasks {
		wg.Go(func() {
			if got := r.actor.Act(ctx, tk); got.Status != handler.StatusDone {
				t.Errorf("task %s = {%s %q}, want done", tk.InstanceID, statusName(got.Status), got.Reason)
			}
		})
	}
	wg.Wait()
	if !cmp.Equal(beatsAtCordon, []int{0, 0}) {
		t.Errorf("heartbeats sent when each node was cordoned = %v, want none before the batch's cordons", beatsAtCordon)
	}
	if got := []int{hooks.beatsOf("tok-1"), hooks.beatsOf("tok-2")}; !cmp.Equal(got, []int{1, 1}) {
		t.Errorf("heartbeats = %v, want one per hook before its completion", got)
	}
	if _, c := hooks.counts(); c != 2 {
		t.Errorf("%d completions, want 2", c)
	}
}
