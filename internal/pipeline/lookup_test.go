package pipeline

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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
