// Command bootstrap is the bench's cordon floor as a Lambda function:
// floor.Cordon behind the runtime API, with the clients Drainpipe's own
// bootstrap would have (the SDK's default configuration from the
// environment with Drainpipe's retry settings, a Kubernetes client from DRAINPIPE_KUBECONFIG with
// Drainpipe's client settings, unthrottled).
// It has the cold start, runtime API and first connections of any
// serverless handler, and nothing else.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/drainpipe/drainpipe/internal/kubewire"
	"github.com/drainpipe/drainpipe/test/bench/wave/floor"
)

func main() {
	ec2c, kube, err := clients(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
	lambda.Start(func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		return floor.Cordon(ctx, ec2c, kube, ev)
	})
}

func clients(ctx context.Context) (*ec2.Client, kubernetes.Interface, error) {
	cfg, err := floor.AWSConfig(ctx) // Drainpipe's retry settings
	if err != nil {
		return nil, nil, err
	}
	rc, err := clientcmd.BuildConfigFromFlags("", os.Getenv("DRAINPIPE_KUBECONFIG"))
	if err != nil {
		return nil, nil, fmt.Errorf("reading DRAINPIPE_KUBECONFIG: %w", err)
	}
	// Drainpipe's own client settings (protobuf, one connection dialed
	// first), unthrottled: the floor's path is no costlier than Drainpipe's.
	kubewire.Tune(rc, -1, 0)
	kube, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, nil, fmt.Errorf("creating the Kubernetes client: %w", err)
	}
	return ec2.NewFromConfig(cfg), kube, nil
}
