package fleet

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/drainpipe/drainpipe/test/awsfake"
)

// Queue names of the wave; one queue per fake.
const (
	Account   = "123456789012"
	QueueName = "drainpipe"
	QueueARN  = "arn:aws:sqs:" + awsfake.Region + ":" + Account + ":" + QueueName
	// CordonQueueName is the cordon queue's, which the same rules target.
	CordonQueueName = QueueName + "-cordon"
	CordonQueueARN  = "arn:aws:sqs:" + awsfake.Region + ":" + Account + ":" + CordonQueueName
)

// Queues makes the function's queue and its dead-letter queue on fake:
// visibility timeout 6 × the function timeout and maxReceiveCount
// redrives, as the stack configures them.
func Queues(fake *awsfake.Server, functionTimeout time.Duration, maxReceiveCount int) (queue, dlq string, err error) {
	return queuesWith(fake, awsfake.QueueOptions{VisibilityTimeout: 6 * functionTimeout, MaxReceiveCount: maxReceiveCount})
}

// queuesWith makes the queue with o, its dead-letter queue set.
func queuesWith(fake *awsfake.Server, o awsfake.QueueOptions) (queue, dlq string, err error) {
	if dlq, err = fake.CreateQueue(Account, QueueName+"-dlq", awsfake.QueueOptions{VisibilityTimeout: o.VisibilityTimeout}); err != nil {
		return "", "", err
	}
	o.DeadLetterURL = dlq
	queue, err = fake.CreateQueue(Account, QueueName, o)
	return queue, dlq, err
}

// Enqueue sends the wave, at once, to each of queues (as EventBridge
// sends one event to each target of its rule): a Spot interruption
// warning for each Spot target and a terminate lifecycle action for each
// hooked one. It returns the number of events.
func (f *Fleet) Enqueue(fake *awsfake.Server, queues ...string) (int, error) {
	return enqueueAt(fake, queues, f.Targets(), time.Now().UTC())
}

// EnqueueAt is Enqueue with the events dated at (SpotDeadline(at) is when
// their instances go).
func (f *Fleet) EnqueueAt(fake *awsfake.Server, at time.Time, queues ...string) (int, error) {
	return enqueueAt(fake, queues, f.Targets(), at)
}

// EnqueueNodes sends the events of some targets only (a wave in parts,
// with a fault injected in between); it returns the number of events.
func EnqueueNodes(fake *awsfake.Server, nodes []Node, queues ...string) (int, error) {
	return enqueueAt(fake, queues, nodes, time.Now().UTC())
}

func enqueueAt(fake *awsfake.Server, queues []string, nodes []Node, now time.Time) (int, error) {
	sent := 0
	for _, n := range nodes {
		body, err := Event(n, now)
		if err != nil {
			return sent, err
		}
		for _, q := range queues {
			if _, err := fake.SendMessage(q, string(body)); err != nil {
				return sent, fmt.Errorf("enqueueing the event of %s: %w", n.Name, err)
			}
		}
		sent++
	}
	return sent, nil
}

// Event is the EventBridge event interrupting n at t.
func Event(n Node, t time.Time) ([]byte, error) {
	ev := map[string]any{
		"version": "0", "id": randomUUID(rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))), "account": Account,
		"time": t.Format(time.RFC3339), "region": awsfake.Region,
	}
	if n.Hook != nil {
		ev["detail-type"], ev["source"] = "EC2 Instance-terminate Lifecycle Action", "aws.autoscaling"
		ev["resources"] = []string{"arn:aws:autoscaling:" + awsfake.Region + ":" + Account + ":autoScalingGroup:042cba90-ad2f-431c-9b4d-6d9055bcc9fb:autoScalingGroupName/" + n.Hook.ASG}
		ev["detail"] = map[string]string{
			"LifecycleActionToken": n.Hook.Token, "AutoScalingGroupName": n.Hook.ASG, "LifecycleHookName": n.Hook.Hook,
			"EC2InstanceId": n.InstanceID, "LifecycleTransition": "autoscaling:EC2_INSTANCE_TERMINATING",
		}
	} else {
		ev["detail-type"], ev["source"] = "EC2 Spot Instance Interruption Warning", "aws.ec2"
		ev["resources"] = []string{"arn:aws:ec2:" + awsfake.Region + ":" + Account + ":instance/" + n.InstanceID}
		ev["detail"] = map[string]string{"instance-id": n.InstanceID, "instance-action": "terminate"}
	}
	b, err := json.Marshal(ev)
	if err != nil {
		return nil, fmt.Errorf("encoding the event of %s: %w", n.Name, err)
	}
	return b, nil
}
