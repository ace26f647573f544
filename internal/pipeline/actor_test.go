package pipeline

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/instance"
	"github.com/drainpipe/drainpipe/internal/lifecycle"
	"github.com/drainpipe/drainpipe/internal/policy"
)

func task(a policy.Action, receive int, ins ...event.Interruption) handler.Task {
	return handler.Task{InstanceID: instID, Action: a, Interruptions: ins, ReceiveCount: receive}
}

func TestAct(t *testing.T) {
	unfinished := &fakeDrainer{report: drain.Report{BlockedByPDB: []string{"shop/web-1"}}}
	tests := []struct {
		name string
		opts rigOpts
		task handler.Task
		// want is the status and a fragment of the reason.
		wantStatus     handler.Status
		wantReason     string
		wantNode       string
		wantDrains     []drain.Request
		wantHeartbeats int
		wantCompletes  int
		wantDescribes  int
		wantErrorLog   bool
		// drainTakes is how far the clock moves while the drain runs.
		drainTakes time.Duration
	}{{
		name:       "spot interruption is drained until its deadline",
		task:       task(policy.ActionCordonAndDrain, 1, spot(t0)),
		wantStatus: handler.StatusDone, wantReason: "drained node " + nodeName, wantNode: nodeName,
		wantDrains: []drain.Request{{Node: nodeName, Kind: "spot-interruption", EventID: "spot-1",
			Deadline: t0.Add(2 * time.Minute), Evict: true}},
		wantDescribes: 1,
	}, {
		name: "rebalance recommendation only cordons",
		task: task(policy.ActionCordon, 1, event.Interruption{Kind: event.KindRebalanceRecommendation,
			Instances: []string{instID}, EventID: "rb-1", Time: t0}),
		wantStatus: handler.StatusDone, wantReason: "cordoned node", wantNode: nodeName,
		wantDrains:    []drain.Request{{Node: nodeName, Kind: "rebalance-recommendation", EventID: "rb-1"}},
		wantDescribes: 1,
	}, {
		name:       "lifecycle hook is heartbeated then completed once drained",
		task:       task(policy.ActionCordonAndDrain, 1, lifecycleEvent(t0)),
		wantStatus: handler.StatusDone, wantReason: "drained node", wantNode: nodeName,
		wantDrains:     []drain.Request{{Node: nodeName, Kind: "asg-lifecycle", EventID: "asg-1", Evict: true}},
		wantHeartbeats: 1, wantCompletes: 1, wantDescribes: 1,
	}, {
		name:       "spot deadline drives a task that also has a hook",
		task:       task(policy.ActionCordonAndDrain, 1, lifecycleEvent(t0), spot(t0)),
		wantStatus: handler.StatusDone, wantReason: "drained node", wantNode: nodeName,
		wantDrains: []drain.Request{{Node: nodeName, Kind: "spot-interruption", EventID: "spot-1",
			Deadline: t0.Add(2 * time.Minute), Evict: true}},
		wantHeartbeats: 1, wantCompletes: 1, wantDescribes: 1,
	}, {
		name:       "budget reached: retry, hook heartbeated and left pending",
		opts:       rigOpts{drainer: unfinished},
		task:       task(policy.ActionCordonAndDrain, 2, lifecycleEvent(t0)),
		wantStatus: handler.StatusRetry, wantReason: "1 lifecycle hook(s) left pending", wantNode: nodeName,
		wantDrains:     []drain.Request{{Node: nodeName, Kind: "asg-lifecycle", EventID: "asg-1", Evict: true}},
		wantHeartbeats: 1, wantDescribes: 1,
	}, {
		name:       "final delivery completes the hook although the drain is unfinished",
		opts:       rigOpts{drainer: &fakeDrainer{report: drain.Report{BlockedByPDB: []string{"shop/web-1"}}}},
		task:       task(policy.ActionCordonAndDrain, 5, lifecycleEvent(t0)),
		wantStatus: handler.StatusRetry, wantReason: "completed before drain finished: last delivery", wantNode: nodeName,
		wantDrains:     []drain.Request{{Node: nodeName, Kind: "asg-lifecycle", EventID: "asg-1", Evict: true}},
		wantHeartbeats: 1, wantCompletes: 1, wantDescribes: 1, wantErrorLog: true,
	}, {
		name: "old lifecycle action is completed before its global timeout",
		opts: rigOpts{drainer: &fakeDrainer{report: drain.Report{BlockedByPDB: []string{"shop/web-1"}}},
			cfg: Config{MaxHookAge: 2 * time.Hour}},
		task:       task(policy.ActionCordonAndDrain, 3, lifecycleEvent(t0.Add(-2*time.Hour))),
		wantStatus: handler.StatusRetry, wantReason: "near its global timeout", wantNode: nodeName,
		wantDrains:     []drain.Request{{Node: nodeName, Kind: "asg-lifecycle", EventID: "asg-1", Evict: true}},
		wantHeartbeats: 1, wantCompletes: 1, wantDescribes: 1, wantErrorLog: true,
	}, {
		name:       "node not found: hook completed, done",
		opts:       rigOpts{nodes: map[string]string{}},
		task:       task(policy.ActionCordonAndDrain, 1, lifecycleEvent(t0)),
		wantStatus: handler.StatusDone, wantReason: "no node of cluster prod runs on the instance",
		wantHeartbeats: 1, wantCompletes: 1, wantDescribes: 1,
	}, {
		name:       "instance of no configured cluster: ignored, hook completed",
		opts:       rigOpts{instances: map[string]instance.Instance{instID: {ID: instID, State: "running"}}},
		task:       task(policy.ActionCordonAndDrain, 1, lifecycleEvent(t0)),
		wantStatus: handler.StatusIgnored, wantReason: "instance ignored: belongs to no configured cluster",
		wantHeartbeats: 1, wantCompletes: 1, wantDescribes: 1,
	}, {
		name: "the lookup's router says why an instance is ignored",
		opts: rigOpts{instances: map[string]instance.Instance{instID: {ID: instID, State: "running"}},
			router: mustRouter(t, []string{"prod"}, "team=platform")},
		task:       task(policy.ActionCordonAndDrain, 1, spot(t0)),
		wantStatus: handler.StatusIgnored, wantReason: "instance ignored: missing-required-tag", wantDescribes: 1,
	}, {
		name:       "instance unknown to EC2: ignored",
		opts:       rigOpts{instances: map[string]instance.Instance{}},
		task:       task(policy.ActionCordonAndDrain, 1, spot(t0)),
		wantStatus: handler.StatusIgnored, wantReason: "not found in EC2", wantDescribes: 1,
	}, {
		name: "terminated instance: stale",
		opts: rigOpts{instances: map[string]instance.Instance{instID: func() instance.Instance {
			in := ourInstance()
			in.State = "terminated"
			return in
		}()}},
		task:       task(policy.ActionCordonAndDrain, 1, spot(t0)),
		wantStatus: handler.StatusIgnored, wantReason: "already terminated", wantDescribes: 1,
	}, {
		name:       "old event on first delivery: stale, no lookup",
		opts:       rigOpts{cfg: Config{MaxEventAge: time.Hour}},
		task:       task(policy.ActionCordonAndDrain, 1, lifecycleEvent(t0.Add(-3*time.Hour))),
		wantStatus: handler.StatusIgnored, wantReason: "stale: event is 3h0m0s past its time",
		wantHeartbeats: 1, wantCompletes: 1,
	}, {
		name:       "old event on redelivery resumes the drain",
		opts:       rigOpts{cfg: Config{MaxEventAge: time.Hour}},
		task:       task(policy.ActionCordonAndDrain, 2, lifecycleEvent(t0.Add(-3*time.Hour))),
		wantStatus: handler.StatusDone, wantReason: "drained node", wantNode: nodeName,
		wantDrains:     []drain.Request{{Node: nodeName, Kind: "asg-lifecycle", EventID: "asg-1", Evict: true}},
		wantHeartbeats: 1, wantCompletes: 1, wantDescribes: 1,
	}, {
		// Spot hibernate has no warning: its deadline is its time. The
		// node still gets cordon and taint; the state changes do the rest.
		name:       "spot deadline already passed: cordon and taint only",
		task:       task(policy.ActionCordonAndDrain, 1, spot(t0.Add(-3*time.Minute))),
		wantStatus: handler.StatusDone, wantReason: "spot-interruption deadline passed 1m0s ago: cordon and taint only",
		wantNode: nodeName, wantDescribes: 1,
		wantDrains: []drain.Request{{Node: nodeName, Kind: "spot-interruption", EventID: "spot-1",
			PassedDeadline: t0.Add(-time.Minute)}},
	}, {
		name:       "spot deadline passes during the drain: acknowledged",
		opts:       rigOpts{drainer: &fakeDrainer{report: drain.Report{Terminating: []string{"shop/web-1"}}}},
		task:       task(policy.ActionCordonAndDrain, 1, spot(t0)),
		drainTakes: 3 * time.Minute,
		wantStatus: handler.StatusDone, wantReason: "instance deadline passed before node", wantNode: nodeName,
		wantDrains: []drain.Request{{Node: nodeName, Kind: "spot-interruption", EventID: "spot-1",
			Deadline: t0.Add(2 * time.Minute), Evict: true}},
		wantDescribes: 1,
	}, {
		name: "stopped instance: evictions issued, acknowledged after a short wait",
		opts: rigOpts{drainer: &fakeDrainer{report: drain.Report{Evicted: []string{"shop/web-1"},
			Terminating: []string{"shop/web-1"}}}, instances: map[string]instance.Instance{instID: stoppedInstance()}},
		task:       task(policy.ActionCordonAndDrain, 1, stateChange(t0, "stopped")),
		drainTakes: DefaultStoppedWait,
		wantStatus: handler.StatusDone, wantReason: "instance is stopped: evictions issued", wantNode: nodeName,
		wantDrains: []drain.Request{{Node: nodeName, Kind: "state-change", EventID: "sc-1",
			Deadline: t0.Add(DefaultStoppedWait), Evict: true}},
		wantDescribes: 1,
	}, {
		name: "stopped instance cut short by the invocation budget: retry",
		opts: rigOpts{drainer: &fakeDrainer{report: drain.Report{BlockedByPDB: []string{"shop/web-1"}}},
			instances: map[string]instance.Instance{instID: stoppedInstance()}},
		task:       task(policy.ActionCordonAndDrain, 1, stateChange(t0, "stopped")),
		wantStatus: handler.StatusRetry, wantReason: "invocation budget ran out", wantNode: nodeName,
		wantDrains: []drain.Request{{Node: nodeName, Kind: "state-change", EventID: "sc-1",
			Deadline: t0.Add(DefaultStoppedWait), Evict: true}},
		wantDescribes: 1,
	}, {
		name: "stopping instance after a state change: no deadline, waits for its pods",
		opts: rigOpts{drainer: &fakeDrainer{report: drain.Report{Terminating: []string{"shop/web-1"}}},
			instances: map[string]instance.Instance{instID: func() instance.Instance {
				i := ourInstance()
				i.State = "stopping"
				return i
			}()}},
		task:       task(policy.ActionCordonAndDrain, 1, stateChange(t0, "stopping")),
		drainTakes: time.Hour,
		wantStatus: handler.StatusRetry, wantReason: "invocation budget ran out", wantNode: nodeName,
		wantDrains:    []drain.Request{{Node: nodeName, Kind: "state-change", EventID: "sc-1", Evict: true}},
		wantDescribes: 1,
	}, {
		name:       "policy action none: hook completed, nothing looked up",
		task:       task(policy.ActionNone, 1, lifecycleEvent(t0)),
		wantStatus: handler.StatusIgnored, wantReason: `policy action for asg-lifecycle is "none"`,
		wantHeartbeats: 1, wantCompletes: 1,
	}, {
		name:       "EC2 lookup fails: retry",
		opts:       rigOpts{describeErr: fmt.Errorf("api error UnauthorizedOperation: %w", errBoom)},
		task:       task(policy.ActionCordonAndDrain, 1, lifecycleEvent(t0)),
		wantStatus: handler.StatusRetry, wantReason: "looking up instance: describing instance " + instID,
		wantHeartbeats: 1, wantDescribes: 1,
	}, {
		name:       "EC2 lookup fails on last delivery: hook still completed",
		opts:       rigOpts{describeErr: errBoom},
		task:       task(policy.ActionCordonAndDrain, 5, lifecycleEvent(t0)),
		wantStatus: handler.StatusRetry, wantReason: "lifecycle hook drain of prod-workers completed before drain finished",
		wantHeartbeats: 1, wantCompletes: 1, wantDescribes: 1, wantErrorLog: true,
	}, {
		name:       "cluster unreachable: retry",
		opts:       rigOpts{clusterErr: errBoom},
		task:       task(policy.ActionCordonAndDrain, 1, spot(t0)),
		wantStatus: handler.StatusRetry, wantReason: "connecting to cluster prod: boom", wantDescribes: 1,
	}, {
		name:       "node lookup fails: retry",
		opts:       rigOpts{findErr: errBoom},
		task:       task(policy.ActionCordonAndDrain, 1, spot(t0)),
		wantStatus: handler.StatusRetry, wantReason: "finding the node in cluster prod: boom", wantDescribes: 1,
	}, {
		name:       "API server refuses the token: retry, saying what to check",
		opts:       rigOpts{findErr: fmt.Errorf("getting node %s: %w", nodeName, apierrors.NewUnauthorized("Unauthorized"))},
		task:       task(policy.ActionCordonAndDrain, 1, spot(t0)),
		wantStatus: handler.StatusRetry,
		wantReason: "finding the node in cluster prod: the API server refused the function's token (401 Unauthorized): " +
			"check that the function's role is mapped to group drainpipe (access entry or aws-auth)",
		wantDescribes: 1,
	}, {
		name:       "drain fails: retry",
		opts:       rigOpts{drainer: &fakeDrainer{err: errBoom}},
		task:       task(policy.ActionCordonAndDrain, 1, spot(t0)),
		wantStatus: handler.StatusRetry, wantReason: "draining node " + nodeName + ": boom", wantNode: nodeName,
		wantDrains: []drain.Request{{Node: nodeName, Kind: "spot-interruption", EventID: "spot-1",
			Deadline: t0.Add(2 * time.Minute), Evict: true}},
		wantDescribes: 1,
	}, {
		name: "node deleted during the drain: done",
		opts: rigOpts{drainer: &fakeDrainer{err: fmt.Errorf("getting node: %w",
			apierrors.NewNotFound(schema.GroupResource{Resource: "nodes"}, nodeName))}},
		task:       task(policy.ActionCordonAndDrain, 1, lifecycleEvent(t0)),
		wantStatus: handler.StatusDone, wantReason: "disappeared during the drain", wantNode: nodeName,
		wantDrains:     []drain.Request{{Node: nodeName, Kind: "asg-lifecycle", EventID: "asg-1", Evict: true}},
		wantHeartbeats: 1, wantCompletes: 1, wantDescribes: 1,
	}, {
		name:       "hook completion fails: retry",
		opts:       rigOpts{hooks: &fakeHooks{completeErr: errBoom}, cfg: Config{CompleteBackoff: time.Millisecond}},
		task:       task(policy.ActionCordonAndDrain, 1, lifecycleEvent(t0)),
		wantStatus: handler.StatusRetry, wantReason: "completing lifecycle hook drain of prod-workers: boom",
		wantNode:       nodeName,
		wantDrains:     []drain.Request{{Node: nodeName, Kind: "asg-lifecycle", EventID: "asg-1", Evict: true}},
		wantHeartbeats: 1, wantCompletes: lifecycle.CompleteAttempts, wantDescribes: 1,
	}, {
		name:       "dry run looks up and maps but writes nothing",
		opts:       rigOpts{cfg: Config{DryRun: true}},
		task:       task(policy.ActionCordonAndDrain, 5, lifecycleEvent(t0)),
		wantStatus: handler.StatusDone, wantReason: "dry run: would cordon and drain node " + nodeName,
		wantNode: nodeName, wantDescribes: 1,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.drainTakes > 0 {
				clock := &fakeClock{now: t0}
				tt.opts.clock = clock
				tt.opts.drainer.during = func(context.Context) { clock.advance(tt.drainTakes) }
			}
			r := newRig(t, tt.opts)
			got := r.actor.Act(context.Background(), tt.task)

			if got.Status != tt.wantStatus || !strings.Contains(got.Reason, tt.wantReason) || got.Node != tt.wantNode {
				t.Errorf("Act = {%s %q %q}, want {%s containing %q %q}", statusName(got.Status), got.Reason, got.Node,
					statusName(tt.wantStatus), tt.wantReason, tt.wantNode)
			}
			// EventTime (the threat's time kept on the node) has its own test;
			// AfterCordon (the hooks' first answer before evictions) too.
			if diff := cmp.Diff(tt.wantDrains, r.drainer.reqs, cmpopts.IgnoreFields(drain.Request{}, "EventTime", "AfterCordon", "Holds", "By")); diff != "" {
				t.Errorf("drain requests (-want +got):\n%s", diff)
			}
			heartbeats, completes := r.hooks.counts()
			if heartbeats != tt.wantHeartbeats || completes != tt.wantCompletes {
				t.Errorf("heartbeats, completions = %d, %d; want %d, %d", heartbeats, completes, tt.wantHeartbeats,
					tt.wantCompletes)
			}
			if got := len(r.instances.calls); got != tt.wantDescribes {
				t.Errorf("Describe calls = %d, want %d", got, tt.wantDescribes)
			}
			const loud = `"level":"ERROR","msg":"completing lifecycle hook before drain finished"`
			if got := strings.Contains(r.logs.String(), loud); got != tt.wantErrorLog {
				t.Errorf("error log present = %t, want %t; logs:\n%s", got, tt.wantErrorLog, r.logs)
			}
		})
	}
}

// The drain stops HookReserve and reportReserve before the context's
// deadline; its report's write may go on until HookReserve before it.
func TestActKeepsHookReserve(t *testing.T) {
	r := newRig(t, rigOpts{cfg: Config{HookReserve: 7 * time.Second}})
	deadline := time.Now().Add(time.Hour)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	r.actor.Act(ctx, task(policy.ActionCordonAndDrain, 1, lifecycleEvent(t0)))
	want := []time.Time{deadline.Add(-7*time.Second - reportReserve)}
	if diff := cmp.Diff(want, r.drainer.deadlines); diff != "" {
		t.Errorf("drain deadlines (-want +got):\n%s", diff)
	}
	if len(r.drainer.reqs) != 1 || !r.drainer.reqs[0].ReportBy.Equal(deadline.Add(-7*time.Second)) {
		t.Errorf("drain requests %+v, want one whose report may be written until the hook reserve", r.drainer.reqs)
	}
}

// With no time left beyond the reserve (a function timeout barely above
// the reserves), the node is still cordoned, within the reserve: a cordon
// takes milliseconds and keeps new pods off it; the drain waits for a
// delivery with time. With under a second left, it is not touched.
func TestActWithoutBudgetCordonsOnly(t *testing.T) {
	r := newRig(t, rigOpts{cfg: Config{HookReserve: time.Hour}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	got := r.actor.Act(ctx, task(policy.ActionCordonAndDrain, 1, lifecycleEvent(t0)))
	if got.Status != handler.StatusRetry || !strings.Contains(got.Reason, "no time left") || !strings.Contains(got.Reason, "cordoned") {
		t.Errorf("Act = {%s %q}, want retry with no time left, cordoned", statusName(got.Status), got.Reason)
	}
	if len(r.drainer.reqs) != 1 || r.drainer.reqs[0].Evict {
		t.Errorf("drain requests = %+v, want one cordon without evictions", r.drainer.reqs)
	}

	r = newRig(t, rigOpts{cfg: Config{HookReserve: time.Hour}})
	ctx, cancel = context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	got = r.actor.Act(ctx, task(policy.ActionCordonAndDrain, 1, lifecycleEvent(t0)))
	if got.Status != handler.StatusRetry || !strings.Contains(got.Reason, "no time left") {
		t.Errorf("Act = {%s %q}, want retry with no time left", statusName(got.Status), got.Reason)
	}
	if len(r.drainer.reqs) != 0 {
		t.Errorf("drain requests = %v, want none with under a second left", r.drainer.reqs)
	}
}

// Hooks are heartbeated at the start of the attempt and on every tick while
// the drain runs, and not after the drain returns.
func TestActHeartbeatsDuringDrain(t *testing.T) {
	clock := &fakeClock{now: t0, made: make(chan *fakeTicker, 1)}
	hooks := &fakeHooks{beat: make(chan struct{}, 1)}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	const ticks = 3
	d := &fakeDrainer{report: drain.Report{Done: true}, during: func(ctx context.Context) {
		if _, ok := recv(ctx, hooks.beat); !ok { // the heartbeat at the start of the attempt
			return
		}
		tk, ok := recv(ctx, clock.made)
		for i := 0; ok && i < ticks; i++ {
			select {
			case tk.c <- t0:
			case <-ctx.Done():
				return
			}
			_, ok = recv(ctx, hooks.beat)
		}
	}}
	r := newRig(t, rigOpts{cfg: Config{HeartbeatInterval: 40 * time.Second, HookReserve: time.Second}, drainer: d, hooks: hooks, clock: clock})
	got := r.actor.Act(ctx, task(policy.ActionCordonAndDrain, 1, lifecycleEvent(t0)))

	if got.Status != handler.StatusDone {
		t.Fatalf("Act = {%s %q}, want done", statusName(got.Status), got.Reason)
	}
	heartbeats, completes := hooks.counts()
	if heartbeats != 1+ticks || completes != 1 {
		t.Errorf("heartbeats, completions = %d, %d; want %d, 1", heartbeats, completes, 1+ticks)
	}
	if got, want := clock.tickers[0].every, 40*time.Second; got != want {
		t.Errorf("heartbeat interval = %s, want %s", got, want)
	}
}

// The same event delivered three times at once ends the same way each time
// and completes the hook successfully once.
// Duplicate deliveries of one lifecycle message race: each attempt drains
// the node and sends exactly one completion of the same action, and the
// duplicates that find it already completed still end done, not retry.
func TestActDuplicates(t *testing.T) {
	r := newRig(t, rigOpts{})
	tk := task(policy.ActionCordonAndDrain, 1, lifecycleEvent(t0))
	results := make([]handler.Result, 3)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() { results[i] = r.actor.Act(context.Background(), tk) })
	}
	wg.Wait()
	for i, got := range results {
		if got.Status != handler.StatusDone || got.Node != nodeName {
			t.Errorf("result %d = {%s %q node %q}, want done on %s", i, statusName(got.Status), got.Reason, got.Node, nodeName)
		}
	}
	r.drainer.mu.Lock()
	drains := len(r.drainer.reqs)
	r.drainer.mu.Unlock()
	if drains != len(results) {
		t.Errorf("drains = %d, want one per attempt (%d)", drains, len(results))
	}
	r.hooks.mu.Lock()
	completes := append([]event.Lifecycle(nil), r.hooks.completes...)
	r.hooks.mu.Unlock()
	want := *lifecycleEvent(t0).Lifecycle
	if len(completes) != len(results) {
		t.Errorf("completions sent = %d, want one per attempt (%d)", len(completes), len(results))
	}
	for i, l := range completes {
		if l != want {
			t.Errorf("completion %d = %+v, want %+v", i, l, want)
		}
	}
	if got := strings.Count(r.logs.String(), `"already_done":true`); got != len(results)-1 {
		t.Errorf("completions logged as already done = %d, want %d:\n%s", got, len(results)-1, r.logs)
	}
}

// recv receives from ch unless ctx ends first.
func recv[T any](ctx context.Context, ch <-chan T) (T, bool) {
	select {
	case v := <-ch:
		return v, true
	case <-ctx.Done():
		var zero T
		return zero, false
	}
}

// A heartbeat refused because the action is no longer pending is routine
// (a duplicate completed it, or it timed out): no warning, and a task of
// that hook alone has nothing left to drain. Other heartbeat failures are
// warned about and the task goes on.
func TestActHeartbeatOnInactiveHook(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		wantStatus handler.Status
		wantLog    string
		wantWarn   bool
	}{
		{"inactive", fmt.Errorf("recording heartbeat: %w", lifecycle.ErrInactive), handler.StatusIgnored,
			"lifecycle hook no longer pending", false},
		{"other", errBoom, handler.StatusDone, "heartbeating lifecycle hook", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, rigOpts{hooks: &fakeHooks{heartbeatErr: tt.err}})
			got := r.actor.Act(context.Background(), task(policy.ActionCordonAndDrain, 1, lifecycleEvent(t0)))
			if got.Status != tt.wantStatus {
				t.Errorf("Act = {%s %q}, want %s", statusName(got.Status), got.Reason, statusName(tt.wantStatus))
			}
			if drains := len(r.drainer.reqs); (tt.wantStatus == handler.StatusIgnored) != (drains == 0) {
				t.Errorf("drains = %d with status %s", drains, statusName(got.Status))
			}
			logs := r.logs.String()
			if !strings.Contains(logs, tt.wantLog) {
				t.Errorf("logs lack %q:\n%s", tt.wantLog, logs)
			}
			if gotWarn := strings.Contains(logs, `"level":"WARN"`); gotWarn != tt.wantWarn {
				t.Errorf("warning logged = %t, want %t", gotWarn, tt.wantWarn)
			}
		})
	}
}

func stoppedInstance() instance.Instance {
	in := ourInstance()
	in.State = "stopped"
	return in
}

func stateChange(at time.Time, state string) event.Interruption {
	return event.Interruption{Kind: event.KindStateChange, Instances: []string{instID}, EventID: "sc-1",
		Time: at, State: state}
}
