// Package floor is the cordon's unavoidable path, the bench's floor: per
// batch, one DescribeInstances for all its instances (the node names are
// EC2's private DNS names), then one PATCH per node, all at once. Its
// bootstrap runs it as a real Lambda function under the event source
// model, so the floor has the cold start every serverless handler has.
package floor

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/test/esm"
)

// Func is Cordon as an in-process function of the event source model.
func Func(ec2c *ec2.Client, c kubernetes.Interface) esm.Func {
	return func(ctx context.Context, payload []byte) ([]byte, error) {
		var ev events.SQSEvent
		if err := json.Unmarshal(payload, &ev); err != nil {
			return nil, fmt.Errorf("reading the batch: %w", err)
		}
		resp, err := Cordon(ctx, ec2c, c, ev)
		if err != nil {
			return nil, err
		}
		return json.Marshal(resp)
	}
}

// event is what the floor reads of a message: the instance id of a Spot
// warning or of a lifecycle action.
type event struct {
	Detail struct {
		InstanceID string `json:"instance-id"`
		EC2ID      string `json:"EC2InstanceId"`
	} `json:"detail"`
}

// Cordon looks the batch's instances up in one call and patches their
// nodes unschedulable, all at once, as the caller's identity (so API
// Priority and Fairness treats it as Drainpipe). Nothing else: no checks,
// no drain, no hooks; every record answered done. A failed PATCH shows as
// a node never cordoned.
func Cordon(ctx context.Context, ec2c *ec2.Client, c kubernetes.Interface, ev events.SQSEvent) (events.SQSEventResponse, error) {
	var ids []string
	for _, r := range ev.Records {
		var e event
		if err := json.Unmarshal([]byte(r.Body), &e); err == nil {
			ids = append(ids, e.Detail.InstanceID+e.Detail.EC2ID)
		}
	}
	out, err := ec2c.DescribeInstances(ctx, &ec2.DescribeInstancesInput{
		Filters: []ec2types.Filter{{Name: aws.String("instance-id"), Values: ids}},
	})
	if err != nil {
		return events.SQSEventResponse{}, fmt.Errorf("describing %d instances: %w", len(ids), err)
	}
	var wg sync.WaitGroup
	patch := []byte(`{"spec":{"unschedulable":true}}`)
	for _, r := range out.Reservations {
		for _, i := range r.Instances {
			wg.Go(func() {
				// A failure shows as a node never cordoned.
				_, _ = c.CoreV1().Nodes().Patch(ctx, aws.ToString(i.PrivateDnsName), types.MergePatchType, patch, metav1.PatchOptions{})
			})
		}
	}
	wg.Wait()
	return events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}, nil
}
