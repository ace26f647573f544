package fleet_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/fleet"
	"github.com/drainpipe/drainpipe/test/sandbox"
)

// TestReclaimTakesSpotInstancesAtTheirDeadline checks the rig's model of
// EC2 at a Spot deadline: the instance is terminated, its node deleted
// with every pod still on it, and the observer counts the node drained at
// that moment with the evictable pods it lost. A node under a lifecycle
// hook has no such deadline and is left alone.
func TestReclaimTakesSpotInstancesAtTheirDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	sb := sandbox.StartForTest(t, sandbox.Options{}) // one fleet per sandbox
	admin, err := kubernetes.NewForConfig(sb.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	fake := awsfake.New()
	t.Cleanup(fake.Close)
	f, err := fleet.Build(ctx, admin, fake, fleet.Spec{Nodes: 4, PodsPerNode: 4, SpotShare: 0.25, HookShare: 0.34, Replicas: 4, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	obs, err := f.Observe(ctx, admin, admin)
	if err != nil {
		t.Fatal(err)
	}
	defer obs.Stop()
	var spot, hooked fleet.Node
	for _, n := range f.Targets() {
		if n.Spot {
			spot = n
		} else {
			hooked = n
		}
	}
	if spot.Name == "" || hooked.Name == "" {
		t.Fatalf("targets %+v: want one Spot and one hooked", f.Targets())
	}
	held := obs.EvictableOn(spot.Name)

	sent := obs.Start().Add(-fleet.SpotNotice) // its deadline has just passed
	stop := f.Reclaim(ctx, admin, fake, obs, sent)
	if err := obs.WaitDrained(ctx, spot); err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	if got := obs.Times()[spot.Name]; got.Reclaimed == 0 || got.Drained != got.Reclaimed || got.Lost != held || held == 0 {
		t.Errorf("spot node times %+v, want reclaimed, drained then, %d pods lost", got, held)
	}
	if got := obs.Times()[hooked.Name]; got.Reclaimed != 0 || got.Drained != 0 {
		t.Errorf("hooked node times %+v, want untouched", got)
	}
	if _, err := admin.CoreV1().Nodes().Get(ctx, spot.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("getting the reclaimed node: %v, want not found", err)
	}
	pods, err := admin.CoreV1().Pods(f.Namespace).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", spot.Name).String(),
	})
	if err != nil || len(pods.Items) != 0 {
		t.Errorf("pods left on the reclaimed node: %d (%v), want none", len(pods.Items), err)
	}
	if _, err := admin.CoreV1().Nodes().Get(ctx, hooked.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("the hooked node: %v, want it kept", err)
	}
	out, err := ec2.NewFromConfig(fake.Config()).DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{spot.InstanceID, hooked.InstanceID}})
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]ec2types.InstanceStateName{}
	for _, r := range out.Reservations {
		for _, i := range r.Instances {
			states[*i.InstanceId] = i.State.Name
		}
	}
	if states[spot.InstanceID] != ec2types.InstanceStateNameTerminated || states[hooked.InstanceID] != ec2types.InstanceStateNameRunning {
		t.Errorf("instance states %v, want the Spot one terminated, the hooked one running", states)
	}
}
