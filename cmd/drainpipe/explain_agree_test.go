package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	kfake "k8s.io/client-go/kubernetes/fake"

	"github.com/drainpipe/drainpipe/internal/config"
	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/instance"
	"github.com/drainpipe/drainpipe/internal/live"
	"github.com/drainpipe/drainpipe/internal/pipeline"
)

// explain promises the function's verdict. Every sample event and every
// kind `drainpipe event` makes goes through both, under a few
// configurations, with EC2 and the cluster faked to agree with each event:
// only checks that need no call can tell the two apart, and they must not.
func TestExplainAgreesWithTheFunction(t *testing.T) {
	configs := map[string]map[string]string{
		"defaults": nil,
		"prefix and hook names": {"DRAINPIPE_ASG_NAME_PREFIX": "eks-prod-",
			"DRAINPIPE_LIFECYCLE_HOOK_NAMES": "drainpipe,drainpipe-launch"},
		"named groups": {"DRAINPIPE_ASG_NAMES": "my-asg,eks-prod-web"},
	}
	inputs := sampleInputs(t)
	for name, data := range generatedInputs(t) {
		inputs[name] = data
	}
	for cname, env := range configs {
		cfg, err := config.Load(func(k string) string { return env[k] })
		if err != nil {
			t.Fatalf("%s: %v", cname, err)
		}
		for iname, data := range inputs {
			now, err := time.Parse(time.RFC3339, receivedAt(string(data)))
			if err != nil {
				t.Fatal(err)
			}
			msgs := sqsMessages(data, now)
			explained := map[string]string{}
			for _, e := range judge(context.Background(), msgs, cfg, now) {
				explained[e.MessageID] = e.Outcome + ": " + e.Reason
			}
			for id, got := range functionVerdicts(t, msgs, cfg, now) {
				want := explained[id]
				if verdict(want) != verdict(got) {
					t.Errorf("%s, %s, message %s:\n explain:  %s\n function: %s", cname, iname, id, want, got)
				}
			}
		}
	}
}

func verdict(s string) string {
	v, _, _ := strings.Cut(s, ":")
	return v
}

func sampleInputs(t *testing.T) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "test", "events", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no sample events: %v", err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(f)] = data
	}
	return out
}

// generatedInputs are `drainpipe event`'s kinds, the hooks of served and
// foreign groups and names among them.
func generatedInputs(t *testing.T) map[string][]byte {
	t.Helper()
	const at = "2026-11-20T10:00:00Z"
	runs := [][]string{}
	for kind := range eventKinds {
		runs = append(runs, []string{kind})
	}
	for _, state := range []string{"stopped", "shutting-down", "terminated", "running"} {
		runs = append(runs, []string{"state-change", "--state", state})
	}
	for _, kind := range []string{"asg-terminate", "asg-launch"} {
		for _, gh := range [][2]string{{"other-asg", "my-k8s-term-hook"}, {"eks-prod-web", "drainpipe"},
			{"eks-prod-web", "my-k8s-term-hook"}, {"other-asg", "drainpipe"}, {"eks-prod-web", "drainpipe-launch"}} {
			runs = append(runs, []string{kind, "--group", gh[0], "--hook", gh[1]})
		}
	}
	out := map[string][]byte{}
	for _, args := range runs {
		code, stdout, stderr := runCLI(t, nil, "", append([]string{"event", "--at", at, "--token",
			"7a1e7b9c-0000-4000-8000-000000000001"}, args...)...)
		if code != exitOK {
			t.Fatalf("event %v: exit %d: %s", args, code, stderr)
		}
		out["event "+strings.Join(args, " ")] = []byte(stdout)
	}
	return out
}

// functionVerdicts runs msgs through the function's handler and live
// actor in dry run, EC2 and the cluster agreeing with every event: each
// instance runs (or is in the state its notice says) in a served cluster,
// in its hook's group, with a Ready node Drainpipe holds (for restores).
func functionVerdicts(t *testing.T, msgs []events.SQSMessage, cfg config.Config, now time.Time) map[string]string {
	t.Helper()
	ec2 := agreeingEC2{byID: map[string]instance.Instance{}}
	k8s := kfake.NewClientset()
	for _, m := range msgs {
		parsed, err := event.Parse([]byte(m.Body))
		if err != nil {
			continue
		}
		for _, in := range parsed.Interruptions {
			ids := in.Instances
			if len(ids) == 0 && in.Reservation != "" {
				ids = []string{"i-0aaaaaaaaaaaaaaa1"}
				ec2.reservation = ids[0]
			}
			for _, id := range ids {
				ec2.add(t, k8s, id, in, now)
			}
		}
	}
	pcfg := live.PipelineConfig(cfg, live.Options{DryRun: true})
	actor, err := pipeline.New(pcfg, pipeline.Deps{
		Instances: ec2, Clusters: oneCluster{k8s},
		FindNode: func(_ context.Context, _ kubernetes.Interface, inst instance.Instance) (string, error) {
			return inst.PrivateDNSName, nil
		},
		NewDrainer: func(kubernetes.Interface) pipeline.Drainer { return noDrainer{} },
		Hooks:      noHooks{}, Clock: fixedClock{now}, Log: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	h := handler.New(handler.Options{Policy: cfg.Policy, Actor: actor, Concurrency: 1, MaxEventAge: cfg.MaxEventAge,
		Accept: cfg.Accept, SweepRule: cfg.SweepRule, Now: func() time.Time { return now },
		OnRecord: func(_ context.Context, s handler.RecordSummary) {
			out[s.MessageID] = outcomeWord(s.Outcome, restoresOnly(msgs, s.MessageID)) + ": " + s.Reason
		}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, _ = h.Handle(ctx, events.SQSEvent{Records: msgs})
	return out
}

func restoresOnly(msgs []events.SQSMessage, id string) bool {
	for _, m := range msgs {
		if m.MessageId == id {
			parsed, err := event.Parse([]byte(m.Body))
			return err == nil && allRestores(parsed.Interruptions)
		}
	}
	return false
}

// agreeingEC2 reports each instance as its notices describe it.
type agreeingEC2 struct {
	byID        map[string]instance.Instance
	reservation string
}

func (e agreeingEC2) add(t *testing.T, k8s *kfake.Clientset, id string, in event.Interruption, now time.Time) {
	t.Helper()
	inst, ok := e.byID[id]
	if !ok {
		inst = instance.Instance{ID: id, State: "running", Lifecycle: "spot", Cluster: "prod", PrivateDNSName: "ip-" + id,
			AvailabilityZone: "us-east-2a", LaunchTime: now.Add(-24 * time.Hour), Tags: map[string]string{}}
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: inst.PrivateDNSName,
			Annotations: map[string]string{drain.AnnotationKind: string(event.KindStateChange)}},
			Spec:   corev1.NodeSpec{ProviderID: "aws:///us-east-2a/" + id},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
		if _, err := k8s.CoreV1().Nodes().Create(context.Background(), node, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if in.Kind == event.KindStateChange && in.State != "" {
		inst.State = in.State
	}
	if in.Lifecycle != nil {
		inst.Tags[pipeline.GroupTag] = in.Lifecycle.ASG
	}
	e.byID[id] = inst
}

func (e agreeingEC2) Describe(_ context.Context, ids []string) (map[string]instance.Instance, error) {
	out := map[string]instance.Instance{}
	for _, id := range ids {
		if inst, ok := e.byID[id]; ok {
			out[id] = inst
		}
	}
	return out, nil
}

func (e agreeingEC2) InReservation(context.Context, string) (map[string]instance.Instance, error) {
	return map[string]instance.Instance{e.reservation: e.byID[e.reservation]}, nil
}

type oneCluster struct{ c kubernetes.Interface }

func (o oneCluster) Client(context.Context, string) (kubernetes.Interface, error) { return o.c, nil }

type noDrainer struct{}

func (noDrainer) Run(_ context.Context, req drain.Request) (drain.Report, error) {
	return drain.Report{Node: req.Node, Done: true}, nil
}

type noHooks struct{}

func (noHooks) Heartbeat(context.Context, event.Lifecycle) error { return nil }
func (noHooks) Complete(context.Context, event.Lifecycle) (bool, error) {
	return false, nil
}

type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }
func (fixedClock) NewTicker(d time.Duration) pipeline.Ticker {
	return realTicker{time.NewTicker(d)}
}

type realTicker struct{ t *time.Ticker }

func (r realTicker) C() <-chan time.Time { return r.t.C }
func (r realTicker) Stop()               { r.t.Stop() }
