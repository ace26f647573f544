package chaos

import (
	"context"
	"errors"
	"strings"
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
		duplicated(), shortTimeout(), apfFlood(), budgetNeverAllows(), endpointChanged(), restoresDropped(), waveWider(),
	}
}

// Pick keeps the scenarios named in names (comma-separated); all when
// names is empty.
func Pick(all []Scenario, names string) []Scenario {
	if names == "" {
		return all
	}
	var out []Scenario
	for _, sc := range all {
		if strings.Contains(","+names+",", ","+sc.Name+",") {
			out = append(out, sc)
		}
	}
	return out
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
	return Scenario{Name: "aws-throttled", Setup: func(_ context.Context, r *Rig, _ *fleet.Function) error {
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
	spec := DefaultSpec()
	spec.LongGrace = 40 * time.Second // drains outlive an invocation: retries need visibility changes
	fn := DefaultFunction()
	fn.Timeout, fn.Visibility = 20*time.Second, 20*time.Second
	return Scenario{Name: "visibility-failing", Spec: spec, Function: fn, Setup: func(_ context.Context, r *Rig, _ *fleet.Function) error {
		r.Fake.Inject("ChangeMessageVisibilityBatch", awsfake.Internal, -1)
		return nil
	}, Fault: func(ctx context.Context, r *Rig) error {
		err := r.WaitSettled(ctx)
		calls := len(r.Fake.CallsTo("ChangeMessageVisibilityBatch"))
		r.Note("%d ChangeMessageVisibilityBatch calls failed", calls)
		if err == nil && calls == 0 {
			return errors.New("no retry asked for a visibility change: the fault never struck")
		}
		return err
	}}
}

// 7. A function timeout shorter than the drains: each invocation stops
// before its deadline and the drains resume across invocations.
func shortTimeout() Scenario {
	spec := DefaultSpec()
	spec.LongGrace = 40 * time.Second
	fn := DefaultFunction() // 25 s: 10 s of work after the 10 s deadline and 5 s hook reserves
	fn.Timeout, fn.Visibility = 25*time.Second, 25*time.Second
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
	fn := DefaultFunction() // nothing to wait for: the last delivery comes quickly
	fn.MaxReceiveCount, fn.Env = 4, []string{"DRAINPIPE_RETRY_DELAY=2s"}
	// The record carrying a blocked hook ends in the dead-letter queue, its
	// hook completed on the last delivery: both deliberate, both logged.
	return Scenario{Name: "budget-never-allows", Spec: spec, Function: fn, DeadLetters: true}
}

// 2. kube-apiserver stopped and started again mid-drain: watches break,
// connections reset, requests fail until it is back.
func apiserverRestarted() Scenario {
	return Scenario{Name: "apiserver-restarted", Fault: func(ctx context.Context, r *Rig) error {
		if err := r.WaitCordoned(ctx, 2); err != nil {
			return err
		}
		r.Note("kube-apiserver stopped mid-drain, down 3s, started again")
		return r.Sandbox.Restart(ctx, "kube-apiserver", 3*time.Second)
	}}
}

// 3. etcd paused (SIGSTOP) for longer than request timeouts, then
// resumed: the API server answers nothing, then timeouts, meanwhile.
func etcdPaused() Scenario {
	const paused = 20 * time.Second
	return Scenario{Name: "etcd-paused", Fault: func(ctx context.Context, r *Rig) error {
		if err := r.WaitCordoned(ctx, 2); err != nil {
			return err
		}
		if err := r.Sandbox.Pause("etcd"); err != nil {
			return err
		}
		r.Note("etcd paused for %s mid-drain", paused)
		select { // the fault's length, not a synchronisation
		case <-ctx.Done():
		case <-time.After(paused):
		}
		return r.Sandbox.Resume("etcd")
	}}
}

// 6. Every message delivered three times, the copies to different
// environments at once.
func duplicated() Scenario {
	fn := DefaultFunction()
	fn.Duplicates = 3
	return Scenario{Name: "delivered-three-times", Function: fn}
}

// 10. The cluster recreated under the same name while containers are
// warm: EKS describes it first behind a proxy (the old endpoint), which
// closes mid-drain; EKS then answers the new endpoint.
func endpointChanged() Scenario {
	var proxy *fleet.EndpointProxy
	var cluster sandbox.EKSCluster
	return Scenario{Name: "endpoint-changed",
		Sandbox: sandbox.Options{EKSAuth: &sandbox.EKSAuth{Cluster: fleet.DefaultCluster}},
		Setup: func(_ context.Context, r *Rig, fn *fleet.Function) error {
			c, ok := r.Sandbox.EKS()
			if !ok {
				return errors.New("the sandbox runs without EKS authentication")
			}
			p, err := fleet.StartEndpointProxy(c.Endpoint)
			if err != nil {
				return err
			}
			proxy, cluster = p, c
			old := c
			old.Endpoint = p.URL()
			fn.EKS, fn.Kubeconfig = &old, ""
			return nil
		},
		Fault: func(ctx context.Context, r *Rig) error {
			if err := r.WaitCordoned(ctx, 2); err != nil {
				return err
			}
			err := proxy.Close()
			fleet.RegisterEKS(r.Fake, cluster)
			r.Note("old endpoint closed after %d connections; DescribeCluster called %d times before the swap",
				proxy.Accepted(), len(r.Fake.CallsTo("DescribeCluster")))
			return err
		}}
}
