package sweep

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/instance"
)

func TestJudge(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	s := &Sweeper{cfg: Config{OutOfService: true, RebalanceHold: 30 * time.Minute, Margin: DefaultMargin},
		d: Deps{Now: func() time.Time { return now }}}
	node := func(kind string, since, deadline time.Time, taints ...corev1.Taint) *corev1.Node {
		a := map[string]string{drain.AnnotationKind: kind, drain.AnnotationEventID: "ev",
			drain.AnnotationFirstSeen: since.Format(time.RFC3339), drain.AnnotationRestore: `{"unschedulable":true}`}
		if !deadline.IsZero() {
			a[drain.AnnotationDeadline] = deadline.Format(time.RFC3339)
		}
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Annotations: a},
			Spec: corev1.NodeSpec{Unschedulable: true, ProviderID: "aws:///us-west-2a/i-0000000000000000a", Taints: taints}}
	}
	withEnd := func(n *corev1.Node, end time.Time) *corev1.Node {
		n.Annotations[drain.AnnotationThreatEnd] = end.Format(time.RFC3339)
		return n
	}
	running := instance.Instance{ID: "i-0000000000000000a", State: "running", Cluster: "c"}
	stopped := running
	stopped.State = "stopped"
	hourAgo := now.Add(-time.Hour)
	tests := []struct {
		name   string
		node   *corev1.Node
		inst   instance.Instance
		events []instance.ScheduledEvent
		want   string
	}{
		{"lost running notice", node("state-change", hourAgo, time.Time{}), running, nil, RepairGivenBack},
		{"spot long past its deadline", node("spot-interruption", hourAgo, hourAgo.Add(2*time.Minute)), running, nil, RepairGivenBack},
		{"spot deadline ahead: drain in progress", node("spot-interruption", hourAgo, now.Add(time.Minute)), running, nil, ""},
		{"spot just past, within the margin", node("spot-interruption", hourAgo, now.Add(-time.Minute)), running, nil, ""},
		{"fresh hold: its notice may come", node("state-change", now.Add(-time.Minute), time.Time{}), running, nil, ""},
		{"stopped, never out of service", node("spot-interruption", hourAgo, hourAgo), stopped, nil, RepairOutOfService},
		{"stopped, already out of service", node("state-change", hourAgo, time.Time{},
			corev1.Taint{Key: drain.OutOfServiceTaintKey, Effect: corev1.TaintEffectNoExecute}), stopped, nil, ""},
		{"scheduled event still listed", node("scheduled-change", hourAgo, hourAgo), running,
			[]instance.ScheduledEvent{{ID: "instance-event-1", Code: "system-reboot"}}, ""},
		// EC2 and Health name one event by its code and start: an event
		// starting two days after the hold's is another change's, and
		// keeps only its own hold.
		{"another scheduled event listed", node("scheduled-change", hourAgo.Add(-time.Hour), hourAgo), running,
			[]instance.ScheduledEvent{{ID: "instance-event-2", Code: "instance-retirement", NotBefore: now.Add(48 * time.Hour)}}, RepairGivenBack},
		{"its own scheduled event listed", node("scheduled-change", hourAgo.Add(-time.Hour), hourAgo), running,
			[]instance.ScheduledEvent{{ID: "instance-event-3", Code: "instance-retirement", NotBefore: hourAgo.Add(time.Minute)}}, ""},
		{"scheduled event gone", node("scheduled-change", hourAgo.Add(-time.Hour), hourAgo), running, nil, RepairGivenBack},
		{"rebalance hold over", node("rebalance-recommendation", hourAgo, time.Time{}), running, nil, RepairGivenBack},
		{"rebalance hold running", node("rebalance-recommendation", now.Add(-20*time.Minute), time.Time{}), running, nil, ""},
		{"lifecycle action pending", node("asg-lifecycle", hourAgo, time.Time{}), running, nil, ""},
		{"lifecycle action past the longest it can last", node("asg-lifecycle", now.Add(-49*time.Hour), time.Time{}), running, nil, RepairGivenBack},
		// Terminations began 25 minutes ago; the block ends in 5: EC2
		// may still take the instance.
		{"capacity block before its end", withEnd(node("capacity-block-expiry", hourAgo, now.Add(-25*time.Minute)),
			now.Add(5*time.Minute)), running, nil, ""},
		{"capacity block held by an earlier release, before its end", node("capacity-block-expiry", hourAgo,
			now.Add(-25*time.Minute)), running, nil, ""},
		{"capacity block past its end", withEnd(node("capacity-block-expiry", hourAgo, now.Add(-45*time.Minute)),
			now.Add(-15*time.Minute)), running, nil, RepairGivenBack},
		{"health window still open, no EC2 event", withEnd(node("scheduled-change", hourAgo, hourAgo),
			now.Add(time.Hour)), running, nil, ""},
		{"health window closed, no EC2 event", withEnd(node("scheduled-change", hourAgo.Add(-2*time.Hour), hourAgo.Add(-time.Hour)),
			hourAgo), running, nil, RepairGivenBack},
		{"Karpenter disrupting", node("state-change", hourAgo, time.Time{},
			corev1.Taint{Key: drain.KarpenterDisruptedTaint, Effect: corev1.TaintEffectNoSchedule}), running, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := held{cluster: "c", node: tt.node, instance: instanceOf(tt.node)}
			v := s.judge(h, tt.inst, true, tt.events)
			if v.what != tt.want || v.why == "" {
				t.Errorf("judge = %q (%s), want %q with a reason", v.what, v.why, tt.want)
			}
		})
	}
}
