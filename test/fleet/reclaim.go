package fleet

import (
	"context"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/test/awsfake"
)

// SpotNotice is how long EC2 gives a Spot instance after its interruption
// warning's time.
const SpotNotice = 2 * time.Minute

// SpotDeadline is when EC2 takes back a Spot instance warned at sent: the
// event's time (whole seconds, as the event carries it) plus SpotNotice.
func SpotDeadline(sent time.Time) time.Time {
	return sent.UTC().Truncate(time.Second).Add(SpotNotice)
}

// Reclaim takes every Spot target away at its deadline, as EC2 does
// whether or not its node was drained: the instance is terminated, the
// pods still on it die with it (deleted at once: no kubelet is left to
// give them grace) and its node is deleted, as the cloud node controller
// would. The observer first records what each node still held. Without
// it a drain a deadline cut short left its node with pods forever, and a
// wave larger than its deadline allows never ended. Reclaim returns at
// once; stop cancels the reclaims not yet due and waits for those under
// way, returning the first error.
func (f *Fleet) Reclaim(ctx context.Context, c kubernetes.Interface, fake *awsfake.Server, obs *Observer, sent time.Time) (stop func() error) {
	quit := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, len(f.Nodes))
	wg.Go(func() {
		t := time.NewTimer(time.Until(SpotDeadline(sent)))
		defer t.Stop()
		select {
		case <-ctx.Done():
			return
		case <-quit:
			return
		case <-t.C:
		}
		var each sync.WaitGroup
		for _, n := range f.Targets() {
			if !n.Spot {
				continue
			}
			each.Go(func() {
				if err := f.reclaim(ctx, c, fake, obs, n); err != nil {
					errs <- err
				}
			})
		}
		each.Wait()
	})
	return func() error {
		close(quit)
		wg.Wait()
		close(errs)
		return <-errs // the first, or nil
	}
}

// reclaim ends n's instance: its node first, so the scheduler places
// nothing more on it, then the pods bound to it, as the pod garbage
// collector would (again until none is left: a replacement bound just
// before the node went). A failed request is tried again until the run
// ends: the API server of a large wave's bound run, flooded, answers
// some with errors.
func (f *Fleet) reclaim(ctx context.Context, c kubernetes.Interface, fake *awsfake.Server, obs *Observer, n Node) error {
	obs.Reclaimed(n.Name)
	fake.SetInstanceState(n.InstanceID, "terminated")
	zero := int64(0)
	on := metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", n.Name).String()}
	pods := c.CoreV1().Pods(f.Namespace)
	var last error
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if err := c.CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			last = fmt.Errorf("deleting its node: %w", err)
			return false, nil
		}
		if err := pods.DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, on); err != nil {
			last = fmt.Errorf("deleting its pods: %w", err)
			return false, nil
		}
		left, err := pods.List(ctx, on)
		if err != nil {
			last = fmt.Errorf("listing its pods: %w", err)
			return false, nil
		}
		return len(left.Items) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("reclaiming %s: %w (last: %v)", n.Name, err, last)
	}
	return nil
}
