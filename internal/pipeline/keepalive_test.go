package pipeline

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/instance"
	"github.com/drainpipe/drainpipe/internal/policy"
)

// hookOn is a lifecycle action of group asg for instance id.
func hookOn(id, asg, token string, at time.Time) event.Interruption {
	return event.Interruption{Kind: event.KindASGLifecycle, Instances: []string{id}, EventID: "asg-" + token, Time: at,
		Lifecycle: &event.Lifecycle{ASG: asg, Hook: "drain", Token: token,
			Transition: "autoscaling:EC2_INSTANCE_TERMINATING", InstanceID: id}}
}

// beatsOf counts the heartbeats of one action.
func (f *fakeHooks) beatsOf(token string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, l := range f.heartbeats {
		if l.Token == token {
			n++
		}
	}
	return n
}

// The keep-alive's cadence is a third of the hook's heartbeat timeout,
// capped by HeartbeatInterval; unknown timeouts use the cap.
func TestKeepAliveCadence(t *testing.T) {
	tests := []struct {
		name     string
		timeouts map[string]time.Duration
		want     time.Duration
	}{
		{"30 s timeout", map[string]time.Duration{"drain": 30 * time.Second}, 10 * time.Second},
		{"1 h timeout: the cap", map[string]time.Duration{"drain": time.Hour}, 25 * time.Second},
		{"unknown: the cap", map[string]time.Duration{}, 25 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := &fakeClock{now: t0, made: make(chan *fakeTicker, 1)}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			r := newRig(t, rigOpts{clock: clock, timeouts: tt.timeouts})
			tk := task(policy.ActionCordonAndDrain, 1, lifecycleEvent(t0))
			r.actor.Prepare(ctx, []handler.Task{tk})
			ticker, ok := recv(ctx, clock.made)
			if !ok {
				t.Fatal("no keep-alive ticker")
			}
			if ticker.every != tt.want {
				t.Errorf("cadence = %s, want %s", ticker.every, tt.want)
			}
			r.actor.Act(ctx, tk)
		})
	}
}

// Every hook of a batch is heartbeated once the batch is planned, and the
// hook of a task still queued behind a long drain is kept alive by the
// batch's keep-alive; each hook is released when its task settles it.
func TestKeepAliveCoversQueuedTasks(t *testing.T) {
	const second = "i-0fedcba9876543210"
	clock := &fakeClock{now: t0, made: make(chan *fakeTicker, 1)}
	hooks := &fakeHooks{beat: make(chan struct{}, 4)}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	const ticks = 2
	var during func(context.Context)
	d := &fakeDrainer{report: drain.Report{Done: true}, during: func(ctx context.Context) {
		if during != nil {
			during(ctx)
		}
	}}
	r := newRig(t, rigOpts{clock: clock, hooks: hooks, drainer: d, cfg: Config{HookReserve: time.Second},
		instances: map[string]instance.Instance{instID: ourInstance(), second: func() instance.Instance {
			in := ourInstance()
			in.ID = second
			return in
		}()},
		nodes: map[string]string{instID: nodeName, second: "ip-10-0-1-24.eu-west-1.compute.internal"}})
	first := task(policy.ActionCordonAndDrain, 1, hookOn(instID, "prod-workers", "tok-1", t0))
	queued := handler.Task{InstanceID: second, Action: policy.ActionCordonAndDrain, ReceiveCount: 1,
		Interruptions: []event.Interruption{hookOn(second, "prod-workers", "tok-2", t0)}}

	r.actor.Prepare(ctx, []handler.Task{first, queued})
	for range 2 {
		recv(ctx, hooks.beat)
	}
	if got := []int{hooks.beatsOf("tok-1"), hooks.beatsOf("tok-2")}; !cmp.Equal(got, []int{1, 1}) {
		t.Errorf("heartbeats after planning = %v, want one per hook", got)
	}
	ticker, ok := recv(ctx, clock.made)
	if !ok {
		t.Fatal("no keep-alive ticker")
	}
	during = func(ctx context.Context) { // the first task's long drain
		for range ticks {
			select {
			case ticker.c <- t0:
			case <-ctx.Done():
				return
			}
			recv(ctx, hooks.beat)
			recv(ctx, hooks.beat)
		}
	}
	if got := r.actor.Act(ctx, first); got.Status != handler.StatusDone {
		t.Fatalf("first task = {%s %q}, want done", statusName(got.Status), got.Reason)
	}
	if got := []int{hooks.beatsOf("tok-1"), hooks.beatsOf("tok-2")}; !cmp.Equal(got, []int{1 + ticks, 1 + ticks}) {
		t.Errorf("heartbeats after the first drain = %v, want %d each: the queued hook kept alive too", got, 1+ticks)
	}
	during = nil
	if got := r.actor.Act(ctx, queued); got.Status != handler.StatusDone {
		t.Fatalf("queued task = {%s %q}, want done", statusName(got.Status), got.Reason)
	}
	if got := hooks.beatsOf("tok-2"); got != 1+ticks {
		t.Errorf("queued hook heartbeats = %d, want %d (no extra one when its task starts)", got, 1+ticks)
	}
	if _, completes := hooks.counts(); completes != 2 {
		t.Errorf("completions = %d, want 2", completes)
	}
}

// A hook near its own global timeout (min(100 × heartbeat timeout, 48 h))
// is completed although its drain is blocked and its record is on its
// first delivery.
func TestHookGlobalTimeoutFromItsHeartbeatTimeout(t *testing.T) {
	blocked := &fakeDrainer{report: drain.Report{BlockedByPDB: []string{"shop/web-1"}}}
	r := newRig(t, rigOpts{drainer: blocked, timeouts: map[string]time.Duration{"drain": 30 * time.Second}})
	// 30 s × 100 = 50 min global timeout; 40 min old is past 50 − 12.5.
	got := r.actor.Act(context.Background(), task(policy.ActionCordonAndDrain, 1, lifecycleEvent(t0.Add(-40*time.Minute))))
	if got.Status != handler.StatusRetry || !strings.Contains(got.Reason, "near its global timeout") {
		t.Errorf("Act = {%s %q}, want retry with the hook completed near its global timeout", statusName(got.Status), got.Reason)
	}
	if _, completes := r.hooks.counts(); completes != 1 {
		t.Errorf("completions = %d, want 1", completes)
	}
}

// Lifecycle hooks of groups Drainpipe does not serve, or naming a group
// the instance is not in, are neither heartbeated nor completed, and a
// task of such hooks alone drains nothing. Unrestricted, all are served.
func TestForeignHooksLeftAlone(t *testing.T) {
	inGroup := func(g string) map[string]instance.Instance {
		in := ourInstance()
		in.Tags = map[string]string{GroupTag: g}
		return map[string]instance.Instance{instID: in}
	}
	tests := []struct {
		name           string
		cfg            Config
		instances      map[string]instance.Instance
		asg            string
		wantStatus     handler.Status
		wantReason     string
		wantHeartbeats int
		wantCompletes  int
		wantDrains     int
	}{
		{"group not served", Config{ASGNames: []string{"prod-workers"}}, inGroup("other"), "other",
			handler.StatusIgnored, "which Drainpipe does not serve", 0, 0, 0},
		{"served by prefix, instance in another group", Config{ASGNamePrefix: "prod-"}, inGroup("prod-b"), "prod-a",
			handler.StatusIgnored, `tag is "prod-b"`, 1, 0, 0},
		{"served, instance in the group", Config{ASGNames: []string{"prod-a"}}, inGroup("prod-a"), "prod-a",
			handler.StatusDone, "drained node", 1, 1, 1},
		{"unrestricted", Config{}, inGroup("anything"), "other",
			handler.StatusDone, "drained node", 1, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, rigOpts{cfg: tt.cfg, instances: tt.instances})
			got := r.actor.Act(context.Background(), task(policy.ActionCordonAndDrain, 1, hookOn(instID, tt.asg, "tok-9", t0)))
			if got.Status != tt.wantStatus || !strings.Contains(got.Reason, tt.wantReason) {
				t.Errorf("Act = {%s %q}, want %s containing %q", statusName(got.Status), got.Reason,
					statusName(tt.wantStatus), tt.wantReason)
			}
			heartbeats, completes := r.hooks.counts()
			if diff := cmp.Diff([]int{tt.wantHeartbeats, tt.wantCompletes, tt.wantDrains},
				[]int{heartbeats, completes, len(r.drainer.reqs)}); diff != "" {
				t.Errorf("heartbeats, completions, drains (-want +got):\n%s", diff)
			}
		})
	}
}

// A hook whose task ends early for a retry (here the node lookup failed)
// is kept heartbeated while the rest of its batch runs on, until the
// batch's context ends; with a short heartbeat timeout the action would
// otherwise expire with pods still on the node.
func TestKeepAliveCoversRetriedHookUntilBatchEnds(t *testing.T) {
	clock := &fakeClock{now: t0, made: make(chan *fakeTicker, 2)}
	hooks := &fakeHooks{beat: make(chan struct{}, 8)}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	batch, endBatch := context.WithCancel(ctx)
	r := newRig(t, rigOpts{clock: clock, hooks: hooks, findErr: errBoom})
	tk := task(policy.ActionCordonAndDrain, 1, hookOn(instID, "prod-workers", "tok-1", t0))
	r.actor.Prepare(batch, []handler.Task{tk})
	if got := r.actor.Act(batch, tk); got.Status != handler.StatusRetry {
		t.Fatalf("task = {%s %q}, want retry", statusName(got.Status), got.Reason)
	}
	// The plan's ticker, then the one keeping the retried hook; the
	// first stopped with its task, so only the live one takes a tick.
	var tickers [2]*fakeTicker
	for i := range tickers {
		tk, ok := recv(ctx, clock.made)
		if !ok {
			t.Fatal("no keep-alive for the hook its task left pending")
		}
		tickers[i] = tk
	}
	before := hooks.beatsOf("tok-1")
	select {
	case tickers[0].c <- t0:
	case tickers[1].c <- t0:
	case <-ctx.Done():
		t.Fatal("the keep-alive stopped with its task")
	}
	for hooks.beatsOf("tok-1") == before {
		if _, ok := recv(ctx, hooks.beat); !ok {
			t.Fatal("no heartbeat after the task's end")
		}
	}
	endBatch()
	if _, c := hooks.counts(); c != 0 {
		t.Errorf("%d completions, want none: the hook waits for the redelivery", c)
	}
}

// A heartbeat that fails after the SDK's own retries (throttling that
// outlasts them) is tried once more at once: waiting for the next tick
// could let the action expire, as ticks come a third of its timeout apart.
func TestKeepAliveRetriesAFailedHeartbeatAtOnce(t *testing.T) {
	clock := &fakeClock{now: t0, made: make(chan *fakeTicker, 1)}
	hooks := &fakeHooks{heartbeatErr: errBoom}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r := newRig(t, rigOpts{clock: clock, hooks: hooks})
	tk := task(policy.ActionCordonAndDrain, 1, hookOn(instID, "prod-workers", "tok-1", t0))
	r.actor.Prepare(ctx, []handler.Task{tk})
	r.actor.keeper.Answered(ctx, hooksOf(tk)) // Prepare's first heartbeat goes on after it returns
	if got := hooks.beatsOf("tok-1"); got != 2 {
		t.Errorf("heartbeat attempts after a failed one = %d, want 2 (one more at once)", got)
	}
}
