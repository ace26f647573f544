package pipeline

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/instance"
	"github.com/drainpipe/drainpipe/internal/policy"
)

func launchEvent() event.Interruption {
	return event.Interruption{Kind: event.KindASGLaunchLifecycle, Instances: []string{instID}, EventID: "launch-1",
		Time: t0, Lifecycle: &event.Lifecycle{ASG: "prod-workers", Hook: "launch", Token: "tok-launch",
			Transition: event.TransitionLaunching, InstanceID: instID}}
}

// launchingNode is a node getter whose node turns Ready on its readyAt-th
// read; it records whether a hook was completed before that.
type launchingNode struct {
	mu       sync.Mutex
	readyAt  int
	reads    int
	hooks    *fakeHooks
	earlyEnd bool // a completion seen while the node was not Ready
}

func (n *launchingNode) get(context.Context, kubernetes.Interface, instance.Instance) (*corev1.Node, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.reads++
	status := corev1.ConditionFalse
	if n.reads >= n.readyAt {
		status = corev1.ConditionTrue
	}
	if _, completes := n.hooks.counts(); completes > 0 && status != corev1.ConditionTrue {
		n.earlyEnd = true
	}
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status}}}}, nil
}

// A launch hook is completed with CONTINUE only once the node is Ready;
// nothing is cordoned or drained, whatever the task's action.
func TestLaunchWaitsForReady(t *testing.T) {
	hooks := &fakeHooks{}
	node := &launchingNode{readyAt: 3, hooks: hooks}
	clock := &fakeClock{now: t0, made: make(chan *fakeTicker)}
	r := newRig(t, rigOpts{hooks: hooks, clock: clock, nodeOf: node.get, cfg: Config{LaunchPoll: time.Second}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Tick the poll ticker until Act returns; other tickers (the
	// keep-alive) are left alone.
	go func() {
		for {
			select {
			case tk := <-clock.made:
				if tk.every != time.Second {
					continue
				}
				go func() {
					for {
						select {
						case tk.c <- t0:
						case <-ctx.Done():
							return
						}
					}
				}()
			case <-ctx.Done():
				return
			}
		}
	}()

	got := r.actor.Act(ctx, task(policy.ActionNone, 1, launchEvent()))
	cancel()

	if got.Status != handler.StatusDone {
		t.Errorf("Act = {%s %q}, want done", statusName(got.Status), got.Reason)
	}
	if node.reads != 3 || node.earlyEnd {
		t.Errorf("node read %d times, completed early %v; want 3 reads, no completion before Ready", node.reads, node.earlyEnd)
	}
	if diff := cmp.Diff([]event.Lifecycle{*launchEvent().Lifecycle}, hooks.completes); diff != "" {
		t.Errorf("completed hooks (-want +got):\n%s", diff)
	}
	if len(r.drainer.reqs) != 0 {
		t.Errorf("drainer ran %v for a launch hook", r.drainer.reqs)
	}
}

func TestLaunchCompletion(t *testing.T) {
	tests := []struct {
		name          string
		cfg           Config
		receive       int
		budget        time.Duration // the context's time; the hook reserve is 5 s
		wantStatus    handler.Status
		wantCompleted bool
		wantReads     int
	}{
		{name: "flag off completes at once", cfg: Config{LaunchNoWait: true}, receive: 1, budget: time.Minute,
			wantStatus: handler.StatusDone, wantCompleted: true, wantReads: 1}, // one read: a node leaving a warm pool is given back first
		{name: "not Ready when the budget runs out", receive: 1, budget: time.Second,
			wantStatus: handler.StatusRetry, wantCompleted: false, wantReads: 1},
		{name: "not Ready on the last delivery", receive: 5, budget: time.Second,
			wantStatus: handler.StatusRetry, wantCompleted: true, wantReads: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hooks := &fakeHooks{}
			node := &launchingNode{readyAt: 1000, hooks: hooks}
			r := newRig(t, rigOpts{hooks: hooks, nodeOf: node.get, cfg: tt.cfg})
			ctx, cancel := context.WithTimeout(context.Background(), tt.budget)
			defer cancel()

			got := r.actor.Act(ctx, task(policy.ActionNone, tt.receive, launchEvent()))

			_, completes := hooks.counts()
			if got.Status != tt.wantStatus || (completes == 1) != tt.wantCompleted || node.reads != tt.wantReads {
				t.Errorf("Act = {%s %q}, %d completions, %d node reads; want %s, completed %v, %d reads",
					statusName(got.Status), got.Reason, completes, node.reads, statusName(tt.wantStatus),
					tt.wantCompleted, tt.wantReads)
			}
			if len(r.drainer.reqs) != 0 {
				t.Errorf("drainer ran %v for a launch hook", r.drainer.reqs)
			}
		})
	}
}
