package pipeline

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/policy"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// A running notice dated before a Spot warning but delivered after it (SQS
// and EventBridge keep no order; retries come back up to minutes later) is
// overtaken: the node stays held. A running notice dated after the warning
// gives it back.
func TestOlderRestoreKeepsNewerHold(t *testing.T) {
	s := newLiveScene(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n, id := s.node(ctx, fixture.NodeOptions{})
	warn := spot(s.clock.Now())
	warn.InstanceAction = "stop"
	if r := act(t, ctx, s, id, policy.ActionCordonAndDrain, 1, warn); r.Status != handler.StatusDone {
		t.Fatalf("spot warning: %+v", r)
	}
	older := event.Interruption{Kind: event.KindStateChange, EventID: "sc-old", Time: warn.Time.Add(-time.Minute),
		State: "running", Restore: true}
	if r := act(t, ctx, s, id, policy.ActionNone, 1, older); r.Status != handler.StatusIgnored || !strings.Contains(r.Reason, "overtaken") {
		t.Errorf("older running notice: {%s %q}, want ignored as overtaken", statusName(r.Status), r.Reason)
	}
	if m := s.get(ctx, t, n.Name); !m.Cordoned || m.Kind != string(event.KindSpotInterruption) {
		t.Fatalf("after the older running notice: %+v, want still held for the Spot warning", m)
	}
	newer := older
	newer.EventID, newer.Time = "sc-new", warn.Time.Add(3*time.Minute)
	if r := act(t, ctx, s, id, policy.ActionNone, 1, newer); r.Status != handler.StatusDone || !strings.Contains(r.Reason, "gave node") {
		t.Errorf("newer running notice: {%s %q}, want the node given back", statusName(r.Status), r.Reason)
	}
	if m := s.get(ctx, t, n.Name); m.Cordoned || m.Held() {
		t.Errorf("after the newer running notice: %+v, want given back", m)
	}
}

// A launch hook batched with its own instance's running notice (a
// warm-pool instance leaving the pool, whose stopped notice left the node
// cordoned and out of service) gives the node back and completes the hook
// as a launch, once the node is Ready; it is not completed at once with the
// node left held.
func TestLaunchWithRestoreGivesBackThenCompletes(t *testing.T) {
	s := newLiveScene(t, Config{OutOfService: true, StoppedWait: time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n, id := s.node(ctx, fixture.NodeOptions{})
	s.ec2.mu.Lock()
	inst := s.ec2.known[id]
	inst.State = "stopped"
	s.ec2.known[id] = inst
	s.ec2.mu.Unlock()
	stopped := event.Interruption{Kind: event.KindStateChange, EventID: "sc-stopped", Time: s.clock.Now(), State: "stopped"}
	if r := act(t, ctx, s, id, policy.ActionCordon, 1, stopped); r.Status != handler.StatusDone {
		t.Fatalf("stopped notice: %+v", r)
	}
	if m := s.get(ctx, t, n.Name); !m.Cordoned || !m.OutOfSvc {
		t.Fatalf("after the stop: %+v, want cordoned and out of service", m)
	}
	s.ec2.mu.Lock()
	inst.State = "running"
	s.ec2.known[id] = inst
	s.ec2.mu.Unlock()
	s.clock.advance(time.Minute)
	at := s.clock.Now()
	running := event.Interruption{Kind: event.KindStateChange, Instances: []string{id}, EventID: "sc-running", Time: at,
		State: "running", Restore: true}
	launch := event.Interruption{Kind: event.KindASGLaunchLifecycle, Instances: []string{id}, EventID: "launch-1", Time: at,
		Lifecycle: &event.Lifecycle{ASG: "prod-workers", Hook: "drainpipe-launch", Token: "tok-launch",
			Transition: event.TransitionLaunching, InstanceID: id, Origin: "WarmPool", Destination: "AutoScalingGroup"}}
	r := s.actor.Act(ctx, handler.Task{InstanceID: id, Action: policy.ActionNone, ReceiveCount: 1,
		Interruptions: []event.Interruption{launch, running}})
	if r.Status != handler.StatusDone || !strings.Contains(r.Reason, "gave node") || !strings.Contains(r.Reason, "is Ready") {
		t.Errorf("launch with running: {%s %q}, want the node given back, then the hook completed once Ready",
			statusName(r.Status), r.Reason)
	}
	if m := s.get(ctx, t, n.Name); m.Cordoned || m.Held() || m.OutOfSvc {
		t.Errorf("node after the launch: %+v, want given back", m)
	}
}

// Karpenter before v1 labels its nodes karpenter.sh/provisioner-name and
// taints those it disrupts karpenter.sh/disruption: both are recognised as
// the v1 marks are. EKS Auto Mode nodes are left to EKS by default.
func TestOtherControllersNodes(t *testing.T) {
	t.Run("karpenter before v1 skipped", func(t *testing.T) {
		s := newLiveScene(t, Config{SkipKarpenter: true})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		n, id := s.node(ctx, fixture.NodeOptions{Labels: map[string]string{drain.KarpenterProvisionerLabel: "default"}})
		r := act(t, ctx, s, id, policy.ActionCordonAndDrain, 1, spot(s.clock.Now()))
		if r.Status != handler.StatusIgnored || !strings.Contains(r.Reason, "DRAINPIPE_KARPENTER_NODES=skip") {
			t.Errorf("spot warning: {%s %q}, want left to Karpenter", statusName(r.Status), r.Reason)
		}
		if m := s.get(ctx, t, n.Name); m.Cordoned || m.Held() {
			t.Errorf("node touched: %+v", m)
		}
	})
	t.Run("karpenter before v1 disrupting: never given back", func(t *testing.T) {
		s := newLiveScene(t, Config{})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		n, id := s.node(ctx, fixture.NodeOptions{})
		if r := act(t, ctx, s, id, policy.ActionCordon, 1, spot(s.clock.Now())); r.Status != handler.StatusDone {
			t.Fatalf("spot warning: %+v", r)
		}
		node, err := s.env.Client.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		node.Spec.Taints = append(node.Spec.Taints, corev1.Taint{Key: drain.KarpenterDisruptionTaintV0, Value: "disrupting",
			Effect: corev1.TaintEffectNoSchedule})
		if _, err := s.env.Client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		running := event.Interruption{Kind: event.KindStateChange, EventID: "sc-run", Time: s.clock.Now().Add(time.Minute),
			State: "running", Restore: true}
		if r := act(t, ctx, s, id, policy.ActionNone, 1, running); r.Status != handler.StatusIgnored || !strings.Contains(r.Reason, "Karpenter") {
			t.Errorf("running: {%s %q}, want the node left to Karpenter", statusName(r.Status), r.Reason)
		}
	})
	for _, skip := range []bool{true, false} {
		t.Run(fmt.Sprintf("auto mode, skip %v", skip), func(t *testing.T) {
			s := newLiveScene(t, Config{SkipAutoMode: skip})
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			n, id := s.node(ctx, fixture.NodeOptions{Labels: map[string]string{drain.AutoModeLabel: drain.AutoModeCompute}})
			r := act(t, ctx, s, id, policy.ActionCordon, 1, spot(s.clock.Now()))
			m := s.get(ctx, t, n.Name)
			switch {
			case skip && (r.Status != handler.StatusIgnored || !strings.Contains(r.Reason, "EKS Auto Mode") || m.Held()):
				t.Errorf("spot warning: {%s %q}, node %+v; want left to EKS", statusName(r.Status), r.Reason, m)
			case !skip && (r.Status != handler.StatusDone || !m.Cordoned):
				t.Errorf("spot warning: {%s %q}, node %+v; want cordoned", statusName(r.Status), r.Reason, m)
			}
		})
	}
}
