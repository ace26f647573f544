package pipeline

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/lifecycle"
	"github.com/drainpipe/drainpipe/internal/policy"
	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// lateHooks is the real lifecycle client whose heartbeats are sent once
// the node is cordoned: Auto Scaling's answer comes after the cordon, as
// it does when the heartbeat and the cordon race.
type lateHooks struct {
	*lifecycle.Client
	client kubernetes.Interface
	node   string
}

func (h lateHooks) Heartbeat(ctx context.Context, l event.Lifecycle) error {
	waitCordoned(ctx, h.client, h.node)
	return h.Client.Heartbeat(ctx, l)
}

// waitCordoned watches the node until it is unschedulable or ctx ends.
func waitCordoned(ctx context.Context, c kubernetes.Interface, name string) {
	w, err := c.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		return
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		if n, ok := ev.Object.(*corev1.Node); ok && n.Spec.Unschedulable {
			return
		}
	}
}

// goneActionScene is a live scene whose lifecycle actions Auto Scaling
// (the wire fake) no longer has, and one node with its instance.
func goneActionScene(ctx context.Context, t *testing.T) (*liveScene, *awsfake.Server, *corev1.Node, string) {
	t.Helper()
	fake := awsfake.New()
	t.Cleanup(fake.Close)
	hooks := lateHooks{Client: lifecycle.New(autoscaling.NewFromConfig(fake.Config()))}
	s := newLiveSceneWith(t, Config{}, func(d *Deps) { d.Hooks = &hooks })
	n, id := s.node(ctx, fixture.NodeOptions{})
	hooks.client, hooks.node = s.env.Client, n.Name
	return s, fake, n, id
}

// A terminate action Auto Scaling no longer has ("No active Lifecycle
// Action found", answered to the first heartbeat after the cordon): no pod
// is evicted, the node is given back schedulable and unmarked, the hook is
// left alone and the task says why. Whatever the policy: a cordon alone is
// given back too.
func TestInactiveActionNodeNotDrained(t *testing.T) {
	for _, action := range []policy.Action{policy.ActionCordonAndDrain, policy.ActionCordon} {
		t.Run(string(action), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			s, fake, n, id := goneActionScene(ctx, t)
			s.env.Deployment(ctx, "web", 2, fixture.PinnedTo(n.Name))
			s.env.WaitPodsReady(ctx, "app=web", 2)
			s.sent.Take()

			tk := handler.Task{InstanceID: id, Action: action, ReceiveCount: 1,
				Interruptions: []event.Interruption{hookOn(id, "prod-workers", "tok-gone", s.clock.Now())}}
			s.actor.Prepare(ctx, []handler.Task{tk})
			r := s.actor.Act(ctx, tk)

			if r.Status != handler.StatusIgnored || !strings.Contains(r.Reason, "no longer active") ||
				!strings.Contains(r.Reason, "gave node") {
				t.Errorf("Act = {%s %q}, want ignored: action over, node given back", statusName(r.Status), r.Reason)
			}
			for _, req := range s.sent.Take() {
				if strings.HasSuffix(req, "/eviction") {
					t.Errorf("eviction sent: %s", req)
				}
			}
			if m := s.get(ctx, t, n.Name); m.Cordoned || m.Held() || m.Tainted {
				t.Errorf("node after the task: %+v, want schedulable, without Drainpipe's marks", m)
			}
			if pods := s.env.PodsOnNode(ctx, n.Name); len(pods) != 2 {
				t.Errorf("%d pods left on the node, want 2", len(pods))
			}
			if got := fake.Completed(); len(got) != 0 {
				t.Errorf("completed %+v, want the hook left alone", got)
			}
		})
	}
}

// A duplicate delivery that finds the action already over after another
// delivery drained the node (and completed the action) leaves the node as
// that drain left it: the instance is going.
func TestInactiveActionAfterADrainKeepsTheNode(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, _, n, id := goneActionScene(ctx, t)
	in := hookOn(id, "prod-workers", "tok-done", s.clock.Now())
	earlier := drain.New(s.env.Client, drain.DefaultConfig(), nil)
	if rep, err := earlier.Run(ctx, drain.Request{Node: n.Name, Kind: string(in.Kind), EventID: in.EventID, Evict: true}); err != nil || !rep.Done {
		t.Fatalf("the earlier delivery's drain: %+v, %v", rep, err)
	}

	tk := handler.Task{InstanceID: id, Action: policy.ActionCordonAndDrain, ReceiveCount: 1, Interruptions: []event.Interruption{in}}
	s.actor.Prepare(ctx, []handler.Task{tk})
	r := s.actor.Act(ctx, tk)

	if r.Status != handler.StatusIgnored || !strings.Contains(r.Reason, "stays held") {
		t.Errorf("Act = {%s %q}, want ignored, the node left held", statusName(r.Status), r.Reason)
	}
	if m := s.get(ctx, t, n.Name); !m.Cordoned || !m.Held() {
		t.Errorf("node after the task: %+v, want still held", m)
	}
}
