package chaos

import (
	"context"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/fleet"
	"github.com/drainpipe/drainpipe/test/sandbox"
)

// Scenarios is the fault matrix, in the order.
func Scenarios() []Scenario {
	return []Scenario{
		killed(), apiserverRestarted(), etcdPaused(), awsThrottled(), visibilityFailing(),
		duplicated(), shortTimeout(), apfFlood(), budgetNeverAllows(), endpointChanged(),
	}
}

// 1. The function's process SIGKILLed mid-drain: its batch comes back
// after the visibility timeout and the drains resume.
func killed() Scenario {
	return Scenario{Name: "function-killed", Fault: func(ctx context.Context, r *Rig) error {
		if err := r.WaitCordoned(ctx, 1); err != nil {
			return err
		}
		return wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(context.Context) (bool, error) {
			pid, ok := r.Deployment.Mapping.Kill()
			if ok {
				r.Note("SIGKILLed environment pid %d mid-drain", pid)
			}
			return ok, nil
		})
	}}
}

// 4. EC2 DescribeInstances throttled for a while; Auto Scaling heartbeats
// and completions throttled or failing with 5xx now and then.
func awsThrottled() Scenario {
	return Scenario{Name: "aws-throttled", Setup: func(_ context.Context, r *Rig) error {
		r.Fake.Inject("DescribeInstances", awsfake.Throttle, 12)
		for _, action := range []string{"RecordLifecycleActionHeartbeat", "CompleteLifecycleAction"} {
			r.Fake.Inject(action, awsfake.Throttle, 4)
			r.Fake.Inject(action, awsfake.Internal, 2)
			r.Fake.Inject(action, awsfake.Throttle, 3)
		}
		r.Note("DescribeInstances throttled 12 times; heartbeats and completions: 4 throttled, 2 × 500, 3 throttled")
		return nil
	}}
}

// 5. SQS ChangeMessageVisibilityBatch failing throughout: retries come
// back after the queue's visibility timeout instead of the backoff.
func visibilityFailing() Scenario {
	return Scenario{Name: "visibility-failing", Setup: func(_ context.Context, r *Rig) error {
		r.Fake.Inject("ChangeMessageVisibilityBatch", awsfake.Internal, -1)
		return nil
	}, Fault: func(ctx context.Context, r *Rig) error {
		err := r.Observer.WaitDrained(ctx, r.drainable()...)
		r.Note("%d ChangeMessageVisibilityBatch calls failed", len(r.Fake.CallsTo("ChangeMessageVisibilityBatch")))
		return err
	}}
}

// 7. A function timeout shorter than the drains: each invocation stops
// before its deadline and the drains resume across invocations.
func shortTimeout() Scenario {
	spec := DefaultSpec()
	spec.LongGrace = 25 * time.Second
	fn := DefaultFunction()
	fn.Timeout, fn.Visibility = 14*time.Second, 14*time.Second
	return Scenario{Name: "timeout-shorter-than-drain", Spec: spec, Function: fn, Fault: func(_ context.Context, r *Rig) error {
		r.Note("function timeout %s, long grace %s", fn.Timeout, spec.LongGrace)
		return nil
	}}
}

// 8. API Priority and Fairness rejecting requests: a small API server
// (few seats) flooded by another user of Drainpipe's priority level.
func apfFlood() Scenario {
	return Scenario{Name: "apf-flood",
		Sandbox: sandbox.Options{APIServerFlags: []string{"--max-requests-inflight=12", "--max-mutating-requests-inflight=6"}},
		Fault: func(ctx context.Context, r *Rig) error {
			flooder, err := kubernetes.NewForConfig(fleet.Identity{User: "flooder", Groups: fleet.DrainpipeUser.Groups}.Config(r.Sandbox.RESTConfig()))
			if err != nil {
				return err
			}
			before, _ := fleet.APFRejected(ctx, r.Admin)
			fctx, stop := context.WithCancel(ctx)
			var wg sync.WaitGroup
			for range 48 {
				wg.Go(func() {
					for fctx.Err() == nil {
						_, _ = flooder.CoreV1().Pods("").List(fctx, metav1.ListOptions{})
					}
				})
			}
			err = r.Observer.WaitDrained(ctx, r.drainable()...)
			stop()
			wg.Wait()
			after, _ := fleet.APFRejected(ctx, r.Admin)
			r.Note("API Priority and Fairness rejected %d requests during the flood", after-before)
			return err
		}}
}

// 9. A budget that never allows a disruption on two hooked nodes: their
// hooks are completed on their records' last delivery, with an error
// logged, and never before.
func budgetNeverAllows() Scenario {
	spec := DefaultSpec()
	spec.Blocked = 2
	return Scenario{Name: "budget-never-allows", Spec: spec, Fault: func(context.Context, *Rig) error { return nil }}
}

// notYet is a scenario whose fault control is not built.
func notYet(name string) Scenario {
	return Scenario{Name: name, Fault: func(context.Context, *Rig) error {
		return fmt.Errorf("%s: fault not available", name)
	}}
}

func apiserverRestarted() Scenario { return notYet("apiserver-restarted") }
func etcdPaused() Scenario         { return notYet("etcd-paused") }
func duplicated() Scenario         { return notYet("delivered-three-times") }
func endpointChanged() Scenario    { return notYet("endpoint-changed") }
