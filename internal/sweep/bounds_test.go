package sweep

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/hold"
	"github.com/drainpipe/drainpipe/internal/instance"
)

// Each hold is given back exactly once its threat's end plus the margin
// has come, never a second before.

func judgeAt(t *testing.T, n *corev1.Node, inst instance.Instance, at time.Time) verdict {
	t.Helper()
	s := &Sweeper{cfg: Config{OutOfService: true, RebalanceHold: 30 * time.Minute, Margin: DefaultMargin},
		d: Deps{Now: func() time.Time { return at }}}
	return s.judge(held{cluster: "a", node: n, instance: instanceOf(n)}, inst, true, nil)
}

func TestJudgeGivesBackAtTheMarginNotBefore(t *testing.T) {
	t0 := sweepNow.Add(-24 * time.Hour)
	withAnn := func(n *corev1.Node, k, v string) *corev1.Node { n.Annotations[k] = v; return n }
	tests := []struct {
		name string
		node *corev1.Node
		end  time.Time // the threat is over then; given back at end + margin
	}{
		{"spot deadline", heldNode("n", idA, "spot-interruption", t0, t0.Add(2*time.Minute)), t0.Add(2 * time.Minute)},
		{"spot without deadline: cordon plus the notice", heldNode("n", idA, "spot-interruption", t0, time.Time{}), t0.Add(spotNotice)},
		{"capacity block end", withAnn(heldNode("n", idA, "capacity-block-expiry", t0, t0.Add(time.Hour)),
			drain.AnnotationThreatEnd, t0.Add(2*time.Hour).Format(time.RFC3339)), t0.Add(2 * time.Hour)},
		{"capacity block: terminations' start plus their lead", heldNode("n", idA, "capacity-block-expiry", t0, t0.Add(time.Hour)),
			t0.Add(time.Hour + 30*time.Minute)},
		{"capacity block, nothing kept: cordon plus the warning's lead", heldNode("n", idA, "capacity-block-expiry", t0, time.Time{}),
			t0.Add(40 * time.Minute)},
		{"scheduled change window", withAnn(heldNode("n", idA, "scheduled-change", t0, t0.Add(time.Hour)),
			drain.AnnotationThreatEnd, t0.Add(3*time.Hour).Format(time.RFC3339)), t0.Add(3 * time.Hour)},
		{"scheduled change start", heldNode("n", idA, "scheduled-change", t0, t0.Add(time.Hour)), t0.Add(time.Hour)},
		{"rebalance hold", heldNode("n", idA, "rebalance-recommendation", t0, time.Time{}), t0.Add(30 * time.Minute)},
		{"lifecycle action from the cordon", heldNode("n", idA, "asg-lifecycle", t0, time.Time{}), t0.Add(48 * time.Hour)},
		{"lifecycle action from a later threat", withAnn(heldNode("n", idA, "asg-lifecycle", t0, time.Time{}),
			drain.AnnotationThreatTime, t0.Add(time.Hour).Format(time.RFC3339Nano)), t0.Add(49 * time.Hour)},
		{"lifecycle action from the cordon, the threat earlier", withAnn(heldNode("n", idA, "asg-lifecycle", t0, time.Time{}),
			drain.AnnotationThreatTime, t0.Add(-time.Hour).Format(time.RFC3339Nano)), t0.Add(48 * time.Hour)},
		{"state change: the margin after the cordon", heldNode("n", idA, "state-change", t0, time.Time{}), t0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at := tt.end.Add(DefaultMargin)
			if v := judgeAt(t, tt.node, running(idA, "a"), at.Add(-time.Second)); v.what != "" {
				t.Errorf("a second before end plus margin: %q (%s), want left", v.what, v.why)
			}
			v := judgeAt(t, tt.node, running(idA, "a"), at)
			if v.what != RepairGivenBack {
				t.Fatalf("at end plus margin: %q (%s), want given back", v.what, v.why)
			}
			want := hold.Key{Kind: tt.node.Annotations[drain.AnnotationKind], ID: "ev-n"}
			if len(v.match.Holds) != 1 || v.match.Holds[0] != want || !v.match.Running {
				t.Errorf("match = %+v, want the hold judged", v.match)
			}
		})
	}
}

func TestJudgeReasonsNameTheOverrun(t *testing.T) {
	t0 := sweepNow.Add(-24 * time.Hour)
	n := heldNode("n", idA, "spot-interruption", t0, t0.Add(2*time.Minute))
	v := judgeAt(t, n, running(idA, "a"), t0.Add(2*time.Minute+DefaultMargin+5*time.Second))
	if !strings.Contains(v.why, "instance still runs 10m5s after its spot-interruption deadline") {
		t.Errorf("why = %q", v.why)
	}
	r := heldNode("n", idA, "rebalance-recommendation", t0, time.Time{})
	if v := judgeAt(t, r, running(idA, "a"), t0.Add(30*time.Minute+DefaultMargin+time.Second)); !strings.Contains(v.why, "hold ended 10m1s ago") {
		t.Errorf("why = %q", v.why)
	}
}

func TestJudgeLeavesWhatIsNotItsOwn(t *testing.T) {
	t0 := sweepNow.Add(-24 * time.Hour)
	deleting := metav1.NewTime(sweepNow)
	tests := []struct {
		name string
		node func() *corev1.Node
		inst instance.Instance
		why  string
	}{
		{"being deleted", func() *corev1.Node {
			n := heldNode("n", idA, "state-change", t0, time.Time{})
			n.DeletionTimestamp = &deleting
			return n
		}, running(idA, "a"), "node is being deleted"},
		{"labelled, no hold", func() *corev1.Node { return plainNode("n", idA) }, running(idA, "a"), "no Drainpipe hold"},
		{"no instance in providerID", func() *corev1.Node {
			n := heldNode("n", idA, "state-change", t0, time.Time{})
			n.Spec.ProviderID = "kind://x/y"
			return n
		}, running(idA, "a"), "names no EC2 instance"},
		{"another cluster's instance", func() *corev1.Node { return heldNode("n", idA, "state-change", t0, time.Time{}) },
			running(idA, "b"), "not routed to cluster a"},
		{"pending", func() *corev1.Node { return heldNode("n", idA, "state-change", t0, time.Time{}) },
			instance.Instance{ID: idA, State: "stopping", Cluster: "a"}, "instance is stopping"},
		{"terminated, out of service off", func() *corev1.Node { return heldNode("n", idA, "state-change", t0, time.Time{}) },
			instance.Instance{ID: idA, State: "terminated", Cluster: "a"}, "DRAINPIPE_OUT_OF_SERVICE is off"},
		{"unreadable cordon time", func() *corev1.Node {
			n := heldNode("n", idA, "state-change", t0, time.Time{})
			n.Annotations[drain.AnnotationFirstSeen] = "yesterday"
			return n
		}, running(idA, "a"), "less than the 10m0s margin"},
		{"no hold, within the margin", func() *corev1.Node {
			n := heldNode("n", idA, "", sweepNow.Add(-time.Minute), time.Time{})
			n.Spec.Taints = []corev1.Taint{{Key: drain.TaintKey, Effect: corev1.TaintEffectNoSchedule}}
			return n
		}, running(idA, "a"), "less than the 10m0s margin"},
		{"unknown kind", func() *corev1.Node { return heldNode("n", idA, "meteor", t0, time.Time{}) },
			running(idA, "a"), "held for meteor, which the sweep does not judge"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Sweeper{cfg: Config{OutOfService: tt.name != "terminated, out of service off", Margin: DefaultMargin},
				d: Deps{Now: func() time.Time { return sweepNow }}}
			n := tt.node()
			v := s.judge(held{cluster: "a", node: n, instance: instanceOf(n)}, tt.inst, true, nil)
			if v.what != "" || !strings.Contains(v.why, tt.why) {
				t.Errorf("judge = %q (%s), want left because %q", v.what, v.why, tt.why)
			}
		})
	}
}

func TestJudgeGivesBackAnOutOfServiceNodeRunningAgain(t *testing.T) {
	n := heldNode("n", idA, "", sweepNow.Add(-time.Hour), time.Time{})
	n.Annotations[drain.AnnotationOutOfService] = "true"
	n.Spec.Taints = []corev1.Taint{{Key: drain.OutOfServiceTaintKey, Effect: corev1.TaintEffectNoExecute}}
	v := judgeAt(t, n, running(idA, "a"), sweepNow)
	if v.what != RepairGivenBack || v.match.Kinds != nil || !v.match.Running {
		t.Errorf("judge = %+v, want given back matching any kind", v)
	}
}

func TestInstanceOf(t *testing.T) {
	for provider, want := range map[string]string{
		"aws:///us-west-2a/" + idA: idA,
		idA:                        idA,
		"aws:///us-west-2a/":       "",
		"aws:///us-west-2a/i-xyz":  "",
	} {
		if got := instanceOf(&corev1.Node{Spec: corev1.NodeSpec{ProviderID: provider}}); got != want {
			t.Errorf("instanceOf(%q) = %q, want %q", provider, got, want)
		}
	}
}

func TestNewNamesEveryMissingDependency(t *testing.T) {
	_, err := New(Config{}, Deps{})
	for _, name := range []string{"clients", "EC2", "actor", "node finder"} {
		if err == nil || !strings.Contains(err.Error(), "missing "+name) {
			t.Errorf("New without deps: %v, want %q named", err, name)
		}
	}
	d := Deps{Clients: clusterClients{}, EC2: &fakeEC2{}, Actor: actorFunc(func(context.Context, handler.Task) handler.Result { return handler.Result{} }),
		NodeOf: nodeByProvider}
	for margin, want := range map[time.Duration]time.Duration{-time.Nanosecond: DefaultMargin, 0: 0, time.Minute: time.Minute} {
		s, err := New(Config{Margin: margin}, d)
		if err != nil || s.cfg.Margin != want {
			t.Errorf("margin %s: %v, %v; want %s", margin, s, err, want)
		}
	}
}

// A terminate hold whose action's life was recorded while it was pending
// (hold.Hold.End) is bounded by that, not by a timeout lowered since.
func TestJudgeKeepsTheRecordedActionLife(t *testing.T) {
	t0 := sweepNow.Add(-24 * time.Hour)
	n := heldNode("n", idA, "asg-lifecycle", t0, time.Time{})
	n.Annotations[drain.AnnotationHolds] = hold.Set{{Kind: "asg-lifecycle", ID: "tok", Time: hold.Precise(t0),
		End: hold.Stamp(t0.Add(10 * time.Hour)), Since: hold.Stamp(t0)}}.Encode()
	lowered := life{d: time.Hour, from: "the hooks' timeout now"}
	judge := func(at time.Time) verdict {
		s := &Sweeper{cfg: Config{Margin: DefaultMargin}, d: Deps{Now: func() time.Time { return at }}}
		return s.judge(held{cluster: "a", node: n, instance: instanceOf(n), life: lowered}, running(idA, "a"), true, nil)
	}
	if v := judge(t0.Add(2 * time.Hour)); v.what != "" {
		t.Errorf("past the lowered life, before the recorded one: %q (%s), want left", v.what, v.why)
	}
	if v := judge(t0.Add(10*time.Hour + DefaultMargin)); v.what != RepairGivenBack {
		t.Errorf("past the recorded life and the margin: %q (%s), want given back", v.what, v.why)
	}
}
