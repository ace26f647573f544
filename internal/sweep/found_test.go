package sweep

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/instance"
	"github.com/drainpipe/drainpipe/internal/policy"
)

// What a sweep finds that no notice brought: stopped instances' nodes and
// scheduled events (dry runs; see dryrun_test.go).

func stoppedIn(id, cluster string) instance.Instance {
	return instance.Instance{ID: id, State: "stopped", Cluster: cluster}
}

func TestSweepTaintsOnlyUnheldStoppedNodesOfServedClusters(t *testing.T) {
	hourAgo := sweepNow.Add(-time.Hour)
	outOfService := plainNode("already", idC)
	outOfService.Spec.Taints = []corev1.Taint{{Key: drain.OutOfServiceTaintKey, Effect: corev1.TaintEffectNoExecute}}
	karpenter := plainNode("karpenter", idD)
	karpenter.Spec.Taints = []corev1.Taint{{Key: drain.KarpenterDisruptedTaint, Effect: corev1.TaintEffectNoSchedule}}
	client := fake.NewClientset(
		plainNode("lost", idA),
		heldNode("held", idB, "state-change", hourAgo, time.Time{}),
		outOfService, karpenter,
	)
	ec2 := &fakeEC2{insts: map[string]instance.Instance{idB: stoppedIn(idB, "a")}, stopped: map[string]instance.Instance{
		idA: stoppedIn(idA, "a"), idB: stoppedIn(idB, "a"), idC: stoppedIn(idC, "a"), idD: stoppedIn(idD, "a"),
		idE: stoppedIn(idE, "a"), // no node
		idF: stoppedIn(idF, "elsewhere"),
	}}
	s := newDrySweeper(t, clusterClients{"a": client, "b": fake.NewClientset()}, ec2, nil, nil)
	rep := s.Sweep(t.Context())
	// The held node is judged once (as held), never twice.
	want := map[string]string{"lost": RepairOutOfService, "held": RepairOutOfService}
	if got := whats(rep); !mapsEqual(got, want) {
		t.Errorf("sweep = %v, want %v", got, want)
	}
	if len(rep.Repairs) != 2 || len(rep.Errors) != 0 {
		t.Errorf("report = %+v", rep)
	}

	s.cfg.OutOfService = false
	rep = s.Sweep(t.Context())
	if got := whats(rep); !mapsEqual(got, map[string]string{"held": "left"}) {
		t.Errorf("with DRAINPIPE_OUT_OF_SERVICE off: sweep = %v, want the held node left only", got)
	}

	s.cfg.OutOfService = true
	ec2.stoppedErr = errStopped
	if rep = s.Sweep(t.Context()); len(rep.Errors) != 1 || rep.Errors[0] != errStopped.Error() {
		t.Errorf("errors = %q, want the stopped instances' error", rep.Errors)
	}
}

var errStopped = errors.New("stopped instances unreadable")

func TestSweepActsOnScheduledEventsNoNoticeBrought(t *testing.T) {
	start := sweepNow.Add(48 * time.Hour)
	acted := plainNode("acted", idC)
	acted.Annotations[drain.AnnotationActed] = `["` + drain.ScheduledKey("instance-stop", start.Add(30*time.Minute)) + `"]`
	otherHealth := heldNode("other-notice", idD, string(event.KindScheduledChange), sweepNow.Add(-time.Hour), start)
	sameHealth := heldNode("same-notice", idE, string(event.KindScheduledChange), sweepNow.Add(-time.Hour), start)
	sameHealth.Annotations[drain.AnnotationEventID] = "instance-event-e"
	client := fake.NewClientset(plainNode("stop", idA), plainNode("maintenance", idB), acted, otherHealth, sameHealth)
	ev := func(id, code string) instance.ScheduledEvent {
		return instance.ScheduledEvent{InstanceID: id, Code: code, ID: "instance-event-" + id[len(id)-1:], NotBefore: start}
	}
	ec2 := &fakeEC2{
		insts: map[string]instance.Instance{idA: running(idA, "a"), idB: running(idB, "a"), idC: running(idC, "a"),
			idD: running(idD, "a"), idE: running(idE, "a"), idF: running(idF, "unserved")},
		events: []instance.ScheduledEvent{ev(idA, "instance-stop"), ev(idB, "system-maintenance"), ev(idC, "instance-stop"),
			ev(idD, "system-reboot"), ev(idE, "instance-retirement"), ev(idF, "instance-stop")},
	}
	var tasks []handler.Task
	s := newDrySweeper(t, clusterClients{"a": client, "b": fake.NewClientset()}, ec2, nil,
		func(_ context.Context, task handler.Task) handler.Result {
			tasks = append(tasks, task)
			return handler.Result{Status: handler.StatusDone, Reason: "drained"}
		})
	rep := s.Sweep(t.Context())
	var got []string
	for _, task := range tasks {
		got = append(got, task.InstanceID)
	}
	// stop: found by the sweep alone; same-notice: held for this very event.
	if strings.Join(got, ",") != idA+","+idE {
		t.Fatalf("acted on %v, want %s then %s", got, idA, idE)
	}
	task := tasks[0]
	in := task.Interruptions[0]
	if task.Action != policy.ActionCordonAndDrain || task.ReceiveCount != 1 || in.Kind != event.KindScheduledChange ||
		!in.Deadline.Equal(start) || !in.Time.Equal(sweepNow) || in.ScheduledCode != "instance-stop" ||
		in.EventID != "instance-event-a" || len(in.Instances) != 1 || in.Instances[0] != idA {
		t.Errorf("task = %+v", task)
	}
	if rep.Count(RepairScheduled) != 2 || !strings.Contains(rep.Repairs[len(rep.Repairs)-1].Reason, "found by the sweep (no Health notice came): drained") {
		t.Errorf("repairs = %+v", rep.Repairs)
	}
}

func TestSweepReportsWhatTheScheduledTaskLeft(t *testing.T) {
	start := sweepNow.Add(time.Hour)
	client := fake.NewClientset(plainNode("pending", idA), plainNode("ignored", idB))
	ec2 := &fakeEC2{insts: map[string]instance.Instance{idA: running(idA, "a"), idB: running(idB, "a")},
		events: []instance.ScheduledEvent{{InstanceID: idA, Code: "instance-reboot", ID: "ev-a", NotBefore: start},
			{InstanceID: idB, Code: "instance-reboot", ID: "ev-b", NotBefore: start}}}
	s := newDrySweeper(t, clusterClients{"a": client, "b": fake.NewClientset()}, ec2, nil,
		func(_ context.Context, task handler.Task) handler.Result {
			if task.InstanceID == idA {
				return handler.Result{Status: handler.StatusRetry, Reason: "drain unfinished"}
			}
			return handler.Result{Status: handler.StatusIgnored, Reason: "nothing to do"}
		})
	rep := s.Sweep(t.Context())
	if len(rep.Pending) != 1 || rep.Pending[0] != "scheduled event ev-a on pending: drain unfinished" {
		t.Errorf("pending = %q", rep.Pending)
	}
	if got := whats(rep); !mapsEqual(got, map[string]string{"ignored": "left"}) || rep.Left[0].Reason != "nothing to do" {
		t.Errorf("sweep = %v (%+v)", got, rep.Left)
	}
	if r := rep.Result(); r.Status != handler.StatusRetry || !strings.HasSuffix(r.Reason, "; retrying: scheduled event ev-a on pending: drain unfinished") {
		t.Errorf("result = %+v, want a retry for the unfinished drain", r)
	}

	s.cfg.ScheduledAction = policy.ActionNone
	if rep = s.Sweep(t.Context()); len(rep.Pending)+len(rep.Left)+len(rep.Repairs) != 0 {
		t.Errorf("with the scheduled-change action none: %+v", rep)
	}
}
