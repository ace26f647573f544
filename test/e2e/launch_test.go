package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/lambdart"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

func launchHook(t *testing.T, a awsfake.LifecycleAction) []byte {
	return freshEvent(t, "eventbridge-asg-launch-lifecycle.json", forLifecycle(a.InstanceID, a.ASG, a.Hook, a.Token, awsfake.Region))
}

// A launch hook is completed with CONTINUE only once the new instance's
// node is Ready: the function finds no node at first and waits (the hook
// heartbeated), the node registers and turns Ready, and only then is the
// action completed. The probe reads the node as each completion arrives.
func TestLiveLaunchHookContinuesOnceNodeReady(t *testing.T) {
	ctx := testContext(t)
	l := newLive(t)
	id, ip := fmt.Sprintf("i-0%016x", rand.Uint64()), fmt.Sprintf("10.%d.%d.%d", 100+rand.IntN(100), rand.IntN(256), 1+rand.IntN(254))
	name := fixture.PrivateDNSName(ip, awsfake.Region)
	l.aws.AddInstances(awsfake.Instance{ID: id, PrivateDNSName: name, LaunchTime: time.Now(),
		Tags: map[string]string{"eks:cluster-name": served, "aws:autoscaling:groupName": "e2e-asg"}})
	l.aws.AddLifecycleHook(awsfake.LifecycleHook{ASG: "e2e-asg", Name: "join",
		Transition: "autoscaling:EC2_INSTANCE_LAUNCHING", HeartbeatTimeout: 30 * time.Second})
	hook := awsfake.LifecycleAction{ASG: "e2e-asg", Hook: "join", Token: "7a1e7b9c-0000-4000-8000-00000000aa01", InstanceID: id}
	l.aws.AddLifecycleAction(hook)
	probe := newCompletionProbe(t, l.aws.URL(), func(ctx context.Context) ([]string, error) {
		n, err := l.k8s.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return []string{"Ready=" + string(c.Status)}, nil
			}
		}
		return []string{"Ready=unknown"}, nil
	})
	l.start(t, "AWS_ENDPOINT_URL_AUTO_SCALING="+probe.URL(), "DRAINPIPE_ASG_NAMES=e2e-asg",
		"DRAINPIPE_DEADLINE_RESERVE=2s", "DRAINPIPE_HOOK_RESERVE=2s")

	answer := make(chan lambdart.Response, 1)
	waiting, answered := context.WithCancel(ctx) // an answer ends the wait below
	defer answered()
	go func() {
		defer answered()
		res, err := send(ctx, l.rt, sqsBatch(t, message{id: "launch", body: launchHook(t, hook)}), 40*time.Second)
		if err != nil {
			t.Error(err)
		}
		answer <- res
	}()
	if _, err := l.rt.WaitLog(waiting, func(line string) bool { return strings.Contains(line, "node not Ready yet") }); err != nil {
		t.Fatalf("the function never waited for the node: %v", err)
	}
	if got := l.aws.Completed(); len(got) != 0 {
		t.Fatalf("lifecycle action completed before its node registered: %+v", got)
	}
	l.k8s.Node(ctx, fixture.NodeOptions{Region: awsfake.Region, InstanceID: id, IP: ip}) // registers, turns Ready
	res := <-answer

	if failed := failedIDs(batchResponse(t, res.Body)); len(failed) != 0 {
		t.Errorf("batch item failures %v, want none", failed)
	}
	want := []awsfake.Completion{{LifecycleAction: hook, Result: "CONTINUE"}}
	if diff := cmp.Diff(want, l.aws.Completed()); diff != "" {
		t.Errorf("completed lifecycle actions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]snapshot{{Pods: []string{"Ready=True"}}}, probe.Snapshots()); diff != "" {
		t.Errorf("node as each completion arrived (-want +got):\n%s", diff)
	}
	if heartbeatsFor(l.aws, hook) == 0 {
		t.Error("launch hook never heartbeated while it waited")
	}
	l.checkNode(ctx, t, name, false, 0) // never cordoned
}
