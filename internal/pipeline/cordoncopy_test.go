package pipeline

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/instance"
	"github.com/drainpipe/drainpipe/internal/lifecycle"
	"github.com/drainpipe/drainpipe/internal/policy"
)

func copyOf(t handler.Task, sent time.Time) handler.Task {
	t.Copy, t.Sent = true, sent
	return t
}

// A cordon copy cordons, taints and holds the node and does nothing else:
// no eviction, no completion, no give-back; an old copy, a restore and an
// instance no longer running are left to the work queue's copy.
func TestActCordonCopy(t *testing.T) {
	stopped := ourInstance()
	stopped.State = "stopped"
	tests := []struct {
		name           string
		opts           rigOpts
		task           handler.Task
		wantStatus     handler.Status
		wantReason     string
		wantDrains     []drain.Request
		wantHeartbeats int
	}{{
		name:       "a Spot warning's copy cordons only",
		task:       copyOf(task(policy.ActionCordonAndDrain, 1, spot(t0)), t0),
		wantStatus: handler.StatusDone, wantReason: "cordoned node " + nodeName + " (a cordon copy",
		wantDrains: []drain.Request{{Node: nodeName, Kind: "spot-interruption", EventID: "spot-1",
			Deadline: t0.Add(2 * time.Minute)}},
	}, {
		name:       "a terminate action's copy cordons and asks whether it is active, completing nothing",
		task:       copyOf(task(policy.ActionCordonAndDrain, 1, lifecycleEvent(t0)), t0),
		wantStatus: handler.StatusDone, wantReason: "a cordon copy",
		wantDrains:     []drain.Request{{Node: nodeName, Kind: "asg-lifecycle", EventID: "asg-1"}},
		wantHeartbeats: 1,
	}, {
		name: "a terminate action's copy gives its hold back when the action is over",
		opts: rigOpts{hooks: &fakeHooks{heartbeatErr: lifecycle.ErrInactive},
			client: fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName}})},
		task:       copyOf(task(policy.ActionCordonAndDrain, 1, lifecycleEvent(t0)), t0),
		wantStatus: handler.StatusIgnored, wantReason: whyNotPending,
		wantDrains:     []drain.Request{{Node: nodeName, Kind: "asg-lifecycle", EventID: "asg-1"}},
		wantHeartbeats: 1,
	}, {
		name:       "a copy sent over 30 s ago is left to the work queue",
		task:       copyOf(task(policy.ActionCordonAndDrain, 1, spot(t0)), t0.Add(-31*time.Second)),
		wantStatus: handler.StatusIgnored, wantReason: "a cordon copy sent 31s ago",
	}, {
		name: "a restore's copy gives nothing back",
		task: copyOf(task(policy.ActionNone, 1, event.Interruption{Kind: event.KindStateChange, Instances: []string{instID},
			EventID: "run-1", Time: t0, State: "running", Restore: true}), t0),
		wantStatus: handler.StatusIgnored, wantReason: "only the work queue's copy gives a node back",
	}, {
		name:       "a stopped instance's copy is left to the work queue",
		opts:       rigOpts{instances: map[string]instance.Instance{instID: stopped}},
		task:       copyOf(task(policy.ActionCordonAndDrain, 1, spot(t0)), t0),
		wantStatus: handler.StatusIgnored, wantReason: "instance is stopped",
	}, {
		name:       "the policy's none holds for a copy",
		task:       copyOf(task(policy.ActionNone, 1, spot(t0)), t0),
		wantStatus: handler.StatusIgnored, wantReason: `policy action for spot-interruption is "none"`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, tt.opts)
			got := r.actor.Act(context.Background(), tt.task)
			if got.Status != tt.wantStatus || !strings.Contains(got.Reason, tt.wantReason) {
				t.Errorf("Act = {%s %q}, want {%s containing %q}", statusName(got.Status), got.Reason,
					statusName(tt.wantStatus), tt.wantReason)
			}
			if diff := cmp.Diff(tt.wantDrains, r.drainer.reqs, cmpopts.IgnoreFields(drain.Request{}, "EventTime", "Holds", "By")); diff != "" {
				t.Errorf("drain requests (-want +got):\n%s", diff)
			}
			for _, req := range r.drainer.reqs {
				if len(req.Holds) == 0 || req.AfterCordon != nil {
					t.Errorf("request holds %v, waits after its cordon %t: want the task's holds and no wait", req.Holds, req.AfterCordon != nil)
				}
			}
			if heartbeats, completes := r.hooks.counts(); heartbeats != tt.wantHeartbeats || completes != 0 {
				t.Errorf("heartbeats, completions = %d, %d; want %d, 0", heartbeats, completes, tt.wantHeartbeats)
			}
		})
	}
}
