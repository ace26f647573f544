package restore

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/instance"
	"github.com/drainpipe/drainpipe/internal/nodemap"
)

// running is the state change to running of i-1 at t0.
var running = event.Interruption{Kind: event.KindStateChange, EventID: "e-run", Time: t0, Restore: true,
	Summary: "instance running again"}

func restoreTask(ins ...event.Interruption) Task { return Task{InstanceID: "i-1", Interruptions: ins} }

// A state change to running or pending gives back the node a stop held,
// undoing the cordon and the taint.
func TestRestoreGivesBackAStoppedInstancesNode(t *testing.T) {
	for _, state := range []string{"running", "pending"} {
		f := newFixture(t, Config{}, heldNode("n1", held("state-change", "e-stop", t0.Add(-time.Hour))))
		f.setInstance(func(i *instance.Instance) { i.State = state })
		r := f.r.RestoreAndLaunch(context.Background(), restoreTask(running), f.log)
		if r.Status != Done || r.Node != "n1" || !strings.HasPrefix(r.Reason, "gave node n1 back (instance running again)") {
			t.Errorf("instance %s: %+v, want node n1 given back", state, r)
		}
		if m, n := marks(t, f.client, "n1"); m.Held() || n.Spec.Unschedulable {
			t.Errorf("instance %s: node still held: %+v", state, m)
		}
	}
}

// A closed AWS Health notice ends its own event's hold and no other.
func TestRestoreOfAHealthNoticeEndsItsEventOnly(t *testing.T) {
	f := newFixture(t, Config{}, heldNode("n1", held("scheduled-change", "ev-a", t0.Add(-2*time.Hour)),
		held("scheduled-change", "ev-b", t0.Add(-time.Hour))))
	closed := event.Interruption{Kind: event.KindScheduledChange, EventID: "ev-a", Time: t0, Restore: true, Summary: "closed"}
	r := f.r.RestoreAndLaunch(context.Background(), restoreTask(closed), f.log)
	if r.Status != Done || !strings.Contains(r.Reason, "node n1 stays held") {
		t.Errorf("%+v, want n1 held for ev-b still", r)
	}
	if m, _ := marks(t, f.client, "n1"); len(m.Holds) != 1 || m.Holds[0].ID != "ev-b" {
		t.Errorf("holds %v, want ev-b's alone", m.Holds)
	}
}

// A restore that cannot see its instance or node asks again, or ignores
// what it cannot act on, with the reason.
func TestRestoreWithoutInstanceOrNode(t *testing.T) {
	notFound := func(context.Context, kubernetes.Interface, instance.Instance) (string, error) { return "n2", nil }
	refused := func(context.Context, kubernetes.Interface, instance.Instance) (string, error) {
		return "", errors.New("list refused")
	}
	for _, c := range []struct {
		name   string
		mod    func(f *fixture)
		status Status
		reason string
	}{
		{"lookup failed", func(f *fixture) { f.r.Lookups = failedLookups{errors.New("throttled")} }, Retry,
			"looking up instance: throttled"},
		{"no instance", func(f *fixture) { f.r.Lookups = lookups{} }, Ignored, "instance not found in EC2"},
		{"stopped", func(f *fixture) { f.setInstance(func(i *instance.Instance) { i.State = "stopped" }) }, Ignored,
			"instance running again, but EC2 reports the instance stopped: its node stays as it is"},
		{"no cluster", func(f *fixture) { f.setInstance(func(i *instance.Instance) { i.Cluster = "" }) }, Ignored,
			"instance ignored: no cluster tag on i-1"},
		{"cluster unreachable", func(f *fixture) { f.setInstance(func(i *instance.Instance) { i.Cluster = "c2" }) }, Retry,
			"connecting to cluster c2: cluster c2: unknown"},
		{"no node", func(f *fixture) { f.setInstance(func(i *instance.Instance) { i.PrivateDNSName = "" }) }, Ignored,
			"no node of cluster c1 runs on the instance: nothing to give back"},
		{"node gone", func(f *fixture) { f.r.Find = notFound }, Ignored,
			"no node of cluster c1 runs on the instance: nothing to give back"},
		{"finding refused", func(f *fixture) { f.r.Find = refused }, Retry, "finding the node in cluster c1: list refused"},
	} {
		f := newFixture(t, Config{}, heldNode("n1", held("state-change", "e-stop", t0.Add(-time.Hour))))
		c.mod(f)
		if r := f.r.RestoreAndLaunch(context.Background(), restoreTask(running), f.log); r.Status != c.status ||
			r.Reason != c.reason {
			t.Errorf("%s: %+v, want status %d, %q", c.name, r, c.status, c.reason)
		}
	}
}

// NodeOf, when given, reads the node in one call instead of Find and a GET.
func TestRestoreReadsTheNodeWithNodeOf(t *testing.T) {
	f := newFixture(t, Config{}, heldNode("n1", held("state-change", "e-stop", t0.Add(-time.Hour))))
	f.r.Find = func(context.Context, kubernetes.Interface, instance.Instance) (string, error) {
		return "", errors.New("Find called")
	}
	f.r.NodeOf = func(ctx context.Context, c kubernetes.Interface, _ instance.Instance) (*corev1.Node, error) {
		return c.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	}
	if r := f.r.RestoreAndLaunch(context.Background(), restoreTask(running), f.log); r.Status != Done || r.Node != "n1" {
		t.Errorf("%+v, want n1 given back", r)
	}
	f.r.NodeOf = func(context.Context, kubernetes.Interface, instance.Instance) (*corev1.Node, error) {
		return nil, nodemap.ErrNotFound
	}
	if r := f.r.RestoreAndLaunch(context.Background(), restoreTask(running), f.log); r.Status != Ignored {
		t.Errorf("NodeOf finding no node: %+v, want ignored", r)
	}
}

// GiveBack leaves an unmarked node, writes nothing in a dry run, and says
// what became of a node gone, refused, kept for another threat or
// overtaken.
func TestGiveBackOutcomes(t *testing.T) {
	ctx := context.Background()
	stop := held("state-change", "e-stop", t0.Add(-time.Hour))
	match := drain.Match{Kinds: returnKinds, Running: true, RestoreTime: t0}
	plain := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	f := newFixture(t, Config{})
	if r := f.r.GiveBack(ctx, f.client, plain, match, "why", f.log); r.Status != Ignored ||
		r.Reason != "node n1 carries no Drainpipe marks: nothing to give back" {
		t.Errorf("unmarked node: %+v", r)
	}
	if r := f.r.GiveBack(ctx, f.client, heldNode("n1", stop), match, "why", f.log); r.Status != Ignored ||
		r.Reason != "node n1 is gone" {
		t.Errorf("node gone: %+v", r)
	}
	dry := newFixture(t, Config{DryRun: true}, heldNode("n1", stop))
	if r := dry.r.GiveBack(ctx, dry.client, heldNode("n1", stop), match, "why", dry.log); r.Status != Done ||
		r.Reason != "dry run: would give node n1 back (why)" {
		t.Errorf("dry run: %+v", r)
	}
	if m, _ := marks(t, dry.client, "n1"); !m.Held() {
		t.Error("dry run gave the node back")
	}
	f = newFixture(t, Config{}, heldNode("n1", stop))
	refusePatches(f.client)
	if r := f.r.GiveBack(ctx, f.client, heldNode("n1", stop), match, "why", f.log); r.Status != Retry ||
		!strings.HasPrefix(r.Reason, "giving node n1 back: ") {
		t.Errorf("patch refused: %+v", r)
	}
	later := held("spot-interruption", "e-spot", t0.Add(time.Minute))
	f = newFixture(t, Config{}, heldNode("n1", later))
	if r := f.r.GiveBack(ctx, f.client, heldNode("n1", later), match, "why", f.log); r.Status != Ignored ||
		!strings.HasPrefix(r.Reason, "node n1 left as it is: overtaken") {
		t.Errorf("restore older than the threat: %+v", r)
	}
	f = newFixture(t, Config{}, heldNode("n1", stop, later))
	if r := f.r.GiveBack(ctx, f.client, heldNode("n1", stop, later), match, "why", f.log); r.Status != Done ||
		!strings.HasPrefix(r.Reason, "node n1 stays held: ended the hold of state-change/e-stop") {
		t.Errorf("one hold of two ended: %+v", r)
	}
}

// A restore that carries a launch hook waits for the node as a launch
// does, and reports both; a restore to retry does not wait.
func TestRestoreAndLaunch(t *testing.T) {
	ctx := context.Background()
	hook := event.Interruption{Kind: event.KindASGLaunchLifecycle, Time: t0, Lifecycle: &event.Lifecycle{Token: "tok"}}
	f := newFixture(t, Config{}, ready(heldNode("n1", held("state-change", "e-stop", t0.Add(-time.Hour))), corev1.ConditionTrue))
	r := f.r.RestoreAndLaunch(ctx, restoreTask(running, hook), f.log)
	if r.Status != Done || r.Node != "n1" || r.Reason != "gave node n1 back (instance running again): undid "+
		"[unschedulable taint held label annotations]; node n1 of cluster c1 is Ready: launch hook completed" {
		t.Errorf("restore and launch: %+v", r)
	}

	f = newFixture(t, Config{}, ready(heldNode("n1", held("state-change", "e-stop", t0.Add(-time.Hour))), corev1.ConditionTrue))
	f.r.Lookups = failedLookups{errors.New("throttled")}
	if r := f.r.RestoreAndLaunch(ctx, restoreTask(running, hook), f.log); r.Status != Retry ||
		r.Reason != "looking up instance: throttled" {
		t.Errorf("restore to retry: %+v", r)
	}

	// The restore found the node, the launch (into the warm pool) none.
	f = newFixture(t, Config{}, heldNode("n1", held("state-change", "e-stop", t0.Add(-time.Hour))))
	task := restoreTask(running, hook)
	task.Hooks = warmPoolHooks()
	if r := f.r.RestoreAndLaunch(ctx, task, f.log); r.Status != Done || r.Node != "n1" {
		t.Errorf("launch into the warm pool after a give-back: %+v, want node n1", r)
	}

	// The launch found the node the restore did not: it registered since.
	f = newFixture(t, Config{}, ready(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, corev1.ConditionTrue))
	reads := 0
	f.r.NodeOf = func(ctx context.Context, c kubernetes.Interface, _ instance.Instance) (*corev1.Node, error) {
		if reads++; reads == 1 {
			return nil, nodemap.ErrNotFound
		}
		return c.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
	}
	if r := f.r.RestoreAndLaunch(ctx, restoreTask(running, hook), f.log); r.Status != Done || r.Node != "n1" {
		t.Errorf("node registered for the launch: %+v, want node n1", r)
	}
}

// A restore alone never waits for its node to be Ready.
func TestRestoreAloneDoesNotWait(t *testing.T) {
	f := newFixture(t, Config{}, ready(heldNode("n1", held("state-change", "e-stop", t0.Add(-time.Hour))), corev1.ConditionTrue))
	if r := f.r.RestoreAndLaunch(context.Background(), restoreTask(running), f.log); strings.Contains(r.Reason, "launch") {
		t.Errorf("restore without a launch hook: %+v", r)
	}
}
