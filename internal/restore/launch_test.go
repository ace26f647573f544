package restore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/awserr"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/instance"
	"github.com/drainpipe/drainpipe/internal/lifecycle"
)

func warmPoolHooks() []lifecycle.Hook {
	return []lifecycle.Hook{{Lifecycle: event.Lifecycle{Token: "tok", Destination: event.WarmPool}}}
}

// launchTask is a task of launch hooks announced at the given times.
func launchTask(at ...time.Time) Task {
	t := Task{InstanceID: "i-1"}
	for i, a := range at {
		l := &event.Lifecycle{Token: fmt.Sprint("tok-", i)}
		t.Interruptions = append(t.Interruptions, event.Interruption{Kind: event.KindASGLaunchLifecycle, Time: a, Lifecycle: l})
		t.Hooks = append(t.Hooks, lifecycle.Hook{Lifecycle: *l, Time: a})
	}
	return t
}

// poolHeld is a node held for the instance's terminate action into the
// warm pool, announced at.
func poolHeld(at time.Time) *corev1.Node {
	return heldNode("n1", held("asg-lifecycle", "tok-pool", at))
}

// A launch that cannot see its instance or cluster asks again; one into
// the warm pool, of another group or of no cluster ends at once.
func TestLaunchWithoutInstanceOrCluster(t *testing.T) {
	for _, c := range []struct {
		name   string
		cfg    Config
		mod    func(f *fixture, task *Task)
		status Status
		reason string
	}{
		{"into the warm pool", Config{}, func(_ *fixture, t *Task) { t.Hooks = warmPoolHooks() }, Done,
			"launch lifecycle action into the warm pool: the instance stops there and serves no node, nothing to wait for"},
		{"not in EC2 yet", Config{}, func(f *fixture, _ *Task) { f.r.Lookups = lookups{} }, Retry,
			"launching instance not found in EC2 yet"},
		{"EC2 not found", Config{}, func(f *fixture, _ *Task) { f.r.Lookups = failedLookups{awserr.ErrNotFound} }, Retry,
			"launching instance not found in EC2 yet"},
		{"lookup failed", Config{}, func(f *fixture, _ *Task) { f.r.Lookups = failedLookups{errors.New("throttled")} },
			Retry, "looking up instance: throttled"},
		{"another group's", Config{}, func(_ *fixture, t *Task) {
			t.Foreign = func(instance.Instance) (string, bool) { return "not in the group", true }
		}, Ignored, "not in the group"},
		{"no cluster", Config{}, func(f *fixture, _ *Task) { f.setInstance(func(i *instance.Instance) { i.Cluster = "" }) },
			Done, "launching instance is in no cluster Drainpipe serves (no cluster tag on i-1): no node to wait for"},
		{"cluster unreachable", Config{}, func(f *fixture, _ *Task) {
			f.setInstance(func(i *instance.Instance) { i.Cluster = "c2" })
		}, Retry, "connecting to cluster c2: cluster c2: unknown"},
		{"no wait, no cluster", Config{LaunchNoWait: true}, func(f *fixture, _ *Task) {
			f.setInstance(func(i *instance.Instance) { i.Cluster = "" })
		}, Done, "launch hook completed without waiting for the node (DRAINPIPE_LAUNCH_WAIT_READY=false)"},
		{"no wait, cluster unreachable", Config{LaunchNoWait: true}, func(f *fixture, _ *Task) {
			f.setInstance(func(i *instance.Instance) { i.Cluster = "c2" })
		}, Retry, "connecting to cluster c2: cluster c2: unknown"},
		{"no wait, no node", Config{LaunchNoWait: true}, func(f *fixture, _ *Task) {
			f.setInstance(func(i *instance.Instance) { i.PrivateDNSName = "" })
		}, Done, "launch hook completed without waiting for the node (DRAINPIPE_LAUNCH_WAIT_READY=false)"},
		{"no wait, finding refused", Config{LaunchNoWait: true}, func(f *fixture, _ *Task) {
			f.r.Find = func(context.Context, kubernetes.Interface, instance.Instance) (string, error) {
				return "", errors.New("list refused")
			}
		}, Retry, "finding the launching instance's node in cluster c1: list refused"},
		{"no wait, node held for Spot", Config{LaunchNoWait: true}, func(f *fixture, _ *Task) {
			f.replace(t, heldNode("n1", held("spot-interruption", "e", t0)))
		}, Done, "launch hook completed without waiting for the node (DRAINPIPE_LAUNCH_WAIT_READY=false)"},
	} {
		f := newFixture(t, c.cfg, ready(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, corev1.ConditionFalse))
		task := launchTask(t0)
		c.mod(f, &task)
		if r := f.r.Launch(context.Background(), task, f.log); r.Status != c.status || r.Reason != c.reason {
			t.Errorf("%s: %+v, want status %d, %q", c.name, r, c.status, c.reason)
		}
	}
}

// A launch out of the warm pool ends the pool's hold on its node, whether
// it waits for the node or not, and whether the instance still runs; a
// failed give-back is retried.
func TestLaunchEndsTheWarmPoolsHold(t *testing.T) {
	const given = "gave node n1 back (the instance launches out of the warm pool: its terminate action's hold is over): " +
		"undid [unschedulable taint held label annotations]; "
	for _, c := range []struct {
		name, state string
		cfg         Config
		refuse      bool
		status      Status
		reason      string
	}{
		{"no wait", "pending", Config{LaunchNoWait: true}, false, Done,
			given + "launch hook completed without waiting for the node (DRAINPIPE_LAUNCH_WAIT_READY=false)"},
		{"no wait, running", "running", Config{LaunchNoWait: true}, false, Done,
			given + "launch hook completed without waiting for the node (DRAINPIPE_LAUNCH_WAIT_READY=false)"},
		{"no wait, stopped", "stopped", Config{LaunchNoWait: true}, false, Ignored,
			given + "launching instance is stopped: no node to wait for"},
		{"stopped", "stopped", Config{}, false, Ignored, given + "launching instance is stopped: no node to wait for"},
		{"wait, pending", "pending", Config{}, false, Done, given + "node n1 of cluster c1 is Ready: launch hook completed"},
		{"wait, running", "running", Config{}, false, Done, given + "node n1 of cluster c1 is Ready: launch hook completed"},
		{"no wait, refused", "running", Config{LaunchNoWait: true}, true, Retry,
			"launching instance's node: giving node n1 back: patching node n1: patch refused"},
		{"stopped, refused", "stopped", Config{}, true, Retry, "launching instance's node: giving node n1 back: patching node n1: patch refused"},
		{"wait, refused", "running", Config{}, true, Retry, "launching instance's node: giving node n1 back: patching node n1: patch refused"},
	} {
		f := newFixture(t, c.cfg, ready(poolHeld(t0.Add(-time.Hour)), corev1.ConditionTrue))
		f.setInstance(func(i *instance.Instance) { i.State = c.state })
		if c.refuse {
			refusePatches(f.client)
		}
		r := f.r.Launch(context.Background(), launchTask(t0), f.log)
		if r.Status != c.status || !strings.HasPrefix(r.Reason, c.reason) {
			t.Errorf("%s: %+v, want status %d, %q", c.name, r, c.status, c.reason)
		}
		if m, _ := marks(t, f.client, "n1"); m.Held() != c.refuse {
			t.Errorf("%s: node held %v after the launch", c.name, m.Held())
		}
	}
}

// The pool's hold ends only for a terminate action announced before the
// task's newest launch: a stop announced after it keeps its hold.
func TestLaunchEndsOnlyHoldsOlderThanItsNewestAction(t *testing.T) {
	f := newFixture(t, Config{LaunchNoWait: true}, poolHeld(t0.Add(5*time.Minute)))
	if r := f.r.Launch(context.Background(), launchTask(t0), f.log); !strings.HasPrefix(r.Reason, "node n1 left as it is: overtaken") {
		t.Errorf("hold newer than the launch: %+v", r)
	}
	if m, _ := marks(t, f.client, "n1"); !m.Held() {
		t.Error("a hold announced after the launch ended")
	}
	f = newFixture(t, Config{LaunchNoWait: true}, poolHeld(t0.Add(-5*time.Minute)))
	task := launchTask(t0.Add(-10*time.Minute), t0)
	task.Interruptions = append(task.Interruptions, event.Interruption{Kind: event.KindStateChange, Time: t0.Add(-20 * time.Minute)})
	f.r.Launch(context.Background(), task, f.log)
	if m, _ := marks(t, f.client, "n1"); m.Held() {
		t.Errorf("hold announced between two launches kept: %v", m.Holds)
	}
}

// A launch reads its node at every tick until it is Ready, giving the
// pool's hold back once.
func TestLaunchWaitsForReady(t *testing.T) {
	f := newFixture(t, Config{}, poolHeld(t0.Add(-time.Hour)))
	reads := 0
	f.r.NodeOf = func(ctx context.Context, c kubernetes.Interface, _ instance.Instance) (*corev1.Node, error) {
		n, err := c.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
		if reads++; reads == 2 {
			ready(n, corev1.ConditionTrue)
		}
		return n, err
	}
	f.tick()
	r := f.r.Launch(context.Background(), launchTask(t0), f.log)
	if r.Status != Done || r.Node != "n1" || reads != 2 || !strings.HasPrefix(r.Reason, "gave node n1 back") {
		t.Errorf("%+v after %d reads, want n1 given back and Ready on the second", r, reads)
	}
	if !strings.Contains(f.logs.String(), "not Ready yet; waiting") {
		t.Errorf("no log of the wait: %s", f.logs)
	}
}

// When the budget runs out the launch is retried, saying how far the node
// got; a node Ready then still completes it.
func TestLaunchBudgetRunsOut(t *testing.T) {
	readErr := func(context.Context, kubernetes.Interface, instance.Instance) (*corev1.Node, error) {
		return nil, errors.New("read refused")
	}
	for _, c := range []struct {
		name   string
		node   *corev1.Node
		mod    func(f *fixture)
		status Status
		reason string
	}{
		{"not Ready", ready(heldNode("n1"), corev1.ConditionFalse), nil, Retry,
			"node of launching instance i-1 registered as n1, not Ready in cluster c1 when the invocation budget ran out"},
		{"no Ready condition", &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, nil, Retry,
			"node of launching instance i-1 registered as n1, not Ready in cluster c1"},
		{"not registered", nil, nil, Retry, "node of launching instance i-1 not registered in cluster c1"},
		{"read refused", nil, func(f *fixture) { f.r.NodeOf = readErr }, Retry,
			"node of launching instance i-1 not registered in cluster c1"},
		{"Ready", ready(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, corev1.ConditionTrue), nil, Done,
			"node n1 of cluster c1 is Ready: launch hook completed"},
	} {
		f := newFixture(t, Config{})
		if c.node != nil {
			f = newFixture(t, Config{}, c.node)
		}
		f.spent = true
		if c.mod != nil {
			c.mod(f)
		}
		if r := f.r.Launch(context.Background(), launchTask(t0), f.log); r.Status != c.status || !strings.HasPrefix(r.Reason, c.reason) {
			t.Errorf("%s: %+v, want status %d, %q", c.name, r, c.status, c.reason)
		}
		if warned := strings.Contains(f.logs.String(), "read refused"); warned != (c.name == "read refused") {
			t.Errorf("%s: read error logged %v: %s", c.name, warned, f.logs)
		}
	}
}
