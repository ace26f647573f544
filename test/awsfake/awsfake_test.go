package awsfake

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"
)

func setup(t *testing.T) (*Server, context.Context) {
	s := New()
	t.Cleanup(s.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return s, ctx
}

func code(err error) string {
	var api smithy.APIError
	if errors.As(err, &api) {
		return api.ErrorCode()
	}
	return ""
}

// The fake keeps EC2's rule that InstanceIds fails on any unknown ID.
func TestEC2InstanceIDsFailOnUnknown(t *testing.T) {
	s, ctx := setup(t)
	s.AddInstances(Instance{ID: "i-0000000000000000a"})
	client := ec2.NewFromConfig(s.Config())
	_, err := client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{"i-0000000000000000a", "i-0000000000000000b"}})
	if code(err) != "InvalidInstanceID.NotFound" {
		t.Errorf("error = %v, want InvalidInstanceID.NotFound", err)
	}
}

func TestEC2Paging(t *testing.T) {
	s, ctx := setup(t)
	for _, id := range []string{"i-0000000000000000a", "i-0000000000000000b", "i-0000000000000000c", "i-0000000000000000d",
		"i-0000000000000000e", "i-0000000000000000f", "i-00000000000000010"} {
		s.AddInstances(Instance{ID: id, Tags: map[string]string{"team": "infra"}})
	}
	pages := ec2.NewDescribeInstancesPaginator(ec2.NewFromConfig(s.Config()), &ec2.DescribeInstancesInput{
		Filters:    []types.Filter{{Name: aws.String("tag:team"), Values: []string{"infra"}}},
		MaxResults: aws.Int32(5),
	})
	n := 0
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page.Reservations {
			n += len(r.Instances)
		}
	}
	if n != 7 || len(s.CallsTo("DescribeInstances")) != 2 {
		t.Errorf("got %d instances in %d calls, want 7 in 2", n, len(s.CallsTo("DescribeInstances")))
	}
}

func TestFaultsQueueInOrder(t *testing.T) {
	s, ctx := setup(t)
	s.AddCluster(Cluster{Name: "blue", Endpoint: "https://blue.example", CAData: []byte("pem")})
	s.Inject("DescribeCluster", Throttle, 1)
	s.Inject("DescribeCluster", AccessDenied, 1)
	_, err := eks.NewFromConfig(s.Config()).DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String("blue")})
	if code(err) != "AccessDeniedException" {
		t.Errorf("error = %v, want AccessDeniedException after one throttled retry", err)
	}
	var faults []Fault
	calls := s.Calls()
	for _, c := range calls {
		faults = append(faults, c.Fault)
	}
	if len(faults) != 2 || faults[0] != Throttle || faults[1] != AccessDenied {
		t.Errorf("faults answered = %v, want [Throttle AccessDenied]", faults)
	}
	// Calls are stamped when they arrive, in order (timelines use it).
	if len(calls) == 2 && (calls[0].Time.IsZero() || calls[1].Time.Before(calls[0].Time)) {
		t.Errorf("call times = %v, %v; want set and in order", calls[0].Time, calls[1].Time)
	}
	out, err := eks.NewFromConfig(s.Config()).DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String("blue")})
	if err != nil || aws.ToString(out.Cluster.Endpoint) != "https://blue.example" || aws.ToString(out.Cluster.CertificateAuthority.Data) != "cGVt" {
		t.Errorf("DescribeCluster() = %+v, %v", out, err)
	}
}

// Env must point an SDK configured only from the environment at the fake.
func TestEnvConfiguresSDK(t *testing.T) {
	s, ctx := setup(t)
	for _, kv := range s.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ec2.NewFromConfig(cfg).DescribeInstances(ctx, &ec2.DescribeInstancesInput{}); err != nil {
		t.Fatal(err)
	}
	if _, err := autoscaling.NewFromConfig(cfg).RecordLifecycleActionHeartbeat(ctx, &autoscaling.RecordLifecycleActionHeartbeatInput{
		AutoScalingGroupName: aws.String("g"), LifecycleHookName: aws.String("h"), InstanceId: aws.String("i-0000000000000000a"),
	}); code(err) != "ValidationError" {
		t.Errorf("heartbeat of an unknown action: error = %v, want ValidationError", err)
	}
	if _, err := eks.NewFromConfig(cfg).DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String("x")}); code(err) != "ResourceNotFoundException" {
		t.Errorf("DescribeCluster(unknown) error = %v, want ResourceNotFoundException", err)
	}
	if _, err := sqs.NewFromConfig(cfg).GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("q")}); code(err) != "QueueDoesNotExist" {
		t.Errorf("GetQueueUrl(unknown) error = %v, want QueueDoesNotExist", err)
	}
	if n := len(s.Calls()); n != 4 {
		t.Errorf("calls = %d, want 4", n)
	}
}
