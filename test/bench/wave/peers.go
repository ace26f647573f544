package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	kdrain "k8s.io/kubectl/pkg/drain"

	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/fleet"
)

// NTH's queue-processor defaults: --workers 10; the drain's timeout is
// --node-termination-grace-period (120 s); pods keep their own grace
// (--pod-termination-grace-period -1).
const (
	nthWorkers      = 10
	nthDrainTimeout = 120 * time.Second
)

// nth is the NTH-style peer: one long-running process polling the queue,
// nthWorkers events at a time, each cordoned and drained with kubectl's
// drain library on one client at client-go's defaults (QPS 5, burst 10),
// then its lifecycle action completed and its message deleted.
func nth(ctx context.Context, rc *rest.Config, fake *awsfake.Server, queue string) error {
	rc = fleet.NTHUser.Config(rc)
	rc.QPS, rc.Burst = 0, 0 // client-go's defaults, as NTH leaves them
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return fmt.Errorf("creating NTH's client: %w", err)
	}
	ec2c, asg := ec2.NewFromConfig(fake.Config()), autoscaling.NewFromConfig(fake.Config())
	work := make(chan awsfake.Received)
	var wg sync.WaitGroup
	for range nthWorkers {
		wg.Go(func() {
			for msg := range work {
				if err := nthHandle(ctx, client, ec2c, asg, msg.Body); err == nil {
					_ = fake.DeleteMessage(queue, msg.ReceiptHandle)
				}
			}
		})
	}
	defer wg.Wait()
	defer close(work)
	for ctx.Err() == nil {
		msgs, err := fake.ReceiveMessages(ctx, queue, 10, time.Second)
		if err != nil {
			return nil // ctx ended
		}
		for _, m := range msgs {
			select {
			case work <- m:
			case <-ctx.Done():
				return nil
			}
		}
	}
	return nil
}

type nthEvent struct {
	Detail struct {
		InstanceID string `json:"instance-id"`
		EC2ID      string `json:"EC2InstanceId"`
		ASG        string `json:"AutoScalingGroupName"`
		Hook       string `json:"LifecycleHookName"`
		Token      string `json:"LifecycleActionToken"`
	} `json:"detail"`
}

func nthHandle(ctx context.Context, c kubernetes.Interface, ec2c *ec2.Client, asg *autoscaling.Client, body string) error {
	var ev nthEvent
	if err := json.Unmarshal([]byte(body), &ev); err != nil {
		return fmt.Errorf("parsing event: %w", err)
	}
	id := ev.Detail.InstanceID + ev.Detail.EC2ID
	out, err := ec2c.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if err != nil || len(out.Reservations) == 0 || len(out.Reservations[0].Instances) == 0 {
		return fmt.Errorf("describing %s: %v", id, err)
	}
	node := aws.ToString(out.Reservations[0].Instances[0].PrivateDnsName)
	h := &kdrain.Helper{
		Ctx: ctx, Client: c, Force: true, IgnoreAllDaemonSets: true, DeleteEmptyDirData: true,
		GracePeriodSeconds: -1, Timeout: nthDrainTimeout, Out: io.Discard, ErrOut: io.Discard,
	}
	n, err := c.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("getting node %s: %w", node, err)
	}
	if err := kdrain.RunCordonOrUncordon(h, n, true); err != nil {
		return fmt.Errorf("cordoning %s: %w", node, err)
	}
	drainErr := kdrain.RunNodeDrain(h, node)
	if ev.Detail.Token != "" { // NTH completes the hook even when the drain timed out
		_, err := asg.CompleteLifecycleAction(ctx, &autoscaling.CompleteLifecycleActionInput{
			AutoScalingGroupName: aws.String(ev.Detail.ASG), LifecycleHookName: aws.String(ev.Detail.Hook),
			LifecycleActionToken: aws.String(ev.Detail.Token), LifecycleActionResult: aws.String("CONTINUE"), InstanceId: aws.String(id),
		})
		if err != nil {
			return fmt.Errorf("completing the hook of %s: %w", id, err)
		}
	}
	return drainErr
}

// limit is the unthrottled client: at once it cordons every target node
// and fires every eviction, retrying those a budget refuses every 100 ms,
// with the admin identity (exempt from APF).
func limit(ctx context.Context, c kubernetes.Interface, f *fleet.Fleet) {
	var wg sync.WaitGroup
	for _, n := range f.Targets() {
		wg.Go(func() {
			patch := []byte(`{"spec":{"unschedulable":true}}`)
			if _, err := c.CoreV1().Nodes().Patch(ctx, n.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				return // the observer reports the node never cordoned
			}
			list, err := c.CoreV1().Pods(f.Namespace).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + n.Name})
			if err != nil {
				return
			}
			for _, p := range list.Items {
				if isDaemon(&p) {
					continue
				}
				wg.Go(func() { evictUntilDone(ctx, c, p.Namespace, p.Name) })
			}
		})
	}
	wg.Wait()
}

func evictUntilDone(ctx context.Context, c kubernetes.Interface, ns, name string) {
	ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	for ctx.Err() == nil {
		err := c.CoreV1().Pods(ns).EvictV1(ctx, ev)
		if err == nil || apierrors.IsNotFound(err) || !apierrors.IsTooManyRequests(err) {
			return
		}
		// A budget refused: ask again soon (faster floods the API server).
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func isDaemon(p *corev1.Pod) bool {
	for _, r := range p.OwnerReferences {
		if r.Kind == "DaemonSet" {
			return true
		}
	}
	return false
}
