package awsfake

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// Every service refuses a request that is not SigV4-signed with the test
// credentials for its own region and service, as AWS does, and accepts the
// SDK's own signing with them.
func TestRequestsMustBeSignedWithTheTestCredentials(t *testing.T) {
	calls := map[string]func(ctx context.Context, cfg aws.Config) error{
		"ec2": func(ctx context.Context, cfg aws.Config) error {
			_, err := ec2.NewFromConfig(cfg).DescribeInstances(ctx, &ec2.DescribeInstancesInput{})
			return err
		},
		"autoscaling": func(ctx context.Context, cfg aws.Config) error {
			_, err := autoscaling.NewFromConfig(cfg).RecordLifecycleActionHeartbeat(ctx, &autoscaling.RecordLifecycleActionHeartbeatInput{
				AutoScalingGroupName: aws.String("workers"), LifecycleHookName: aws.String("drain"),
				LifecycleActionToken: aws.String("11111111-2222-3333-4444-555555555555")})
			return err
		},
		"eks": func(ctx context.Context, cfg aws.Config) error {
			_, err := eks.NewFromConfig(cfg).DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String("prod")})
			return err
		},
		"sqs": func(ctx context.Context, cfg aws.Config) error {
			_, err := sqs.NewFromConfig(cfg).GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("drainpipe"), QueueOwnerAWSAccountId: aws.String("123456789012")})
			return err
		},
	}
	wrong := map[string]func(cfg *aws.Config){
		"unsigned":     func(cfg *aws.Config) { cfg.Credentials = aws.AnonymousCredentials{} },
		"other secret": func(cfg *aws.Config) { cfg.Credentials = staticCreds(accessKeyID, "not-the-secret") },
		"other key":    func(cfg *aws.Config) { cfg.Credentials = staticCreds("AKIDOTHEROTHEROTH", secretAccessKey) },
		"other region": func(cfg *aws.Config) { cfg.Region = "eu-west-1" },
		"body altered after signing": func(cfg *aws.Config) {
			cfg.HTTPClient = tamper{next: cfg.HTTPClient}
		},
	}
	for service, call := range calls {
		t.Run(service+"/test credentials", func(t *testing.T) {
			s, ctx := setup(t)
			s.AddCluster(Cluster{Name: "prod"})
			s.AddQueue("123456789012", "drainpipe")
			s.AddLifecycleAction(LifecycleAction{ASG: "workers", Hook: "drain", Token: "11111111-2222-3333-4444-555555555555", InstanceID: "i-0000000000000000a"})
			if err := call(ctx, s.Config()); err != nil {
				t.Fatalf("signed with the test credentials: %v", err)
			}
			if c := s.Calls(); len(c) != 1 || !c[0].Signed || c[0].Service != service {
				t.Errorf("calls = %+v, want one signed %s call", c, service)
			}
		})
		for name, spoil := range wrong {
			t.Run(service+"/"+name, func(t *testing.T) {
				s, ctx := setup(t)
				s.AddCluster(Cluster{Name: "prod"})
				s.AddQueue("123456789012", "drainpipe")
				s.AddLifecycleAction(LifecycleAction{ASG: "workers", Hook: "drain", Token: "11111111-2222-3333-4444-555555555555", InstanceID: "i-0000000000000000a"})
				cfg := s.Config()
				spoil(&cfg)
				err := call(ctx, cfg)
				var resp *awshttp.ResponseError
				if !errors.As(err, &resp) || (resp.HTTPStatusCode() != http.StatusForbidden && resp.HTTPStatusCode() != http.StatusUnauthorized) {
					t.Fatalf("error = %v, want a 401/403 refusal", err)
				}
				for _, c := range s.Calls() {
					if c.Signed {
						t.Errorf("call %+v recorded as signed", c)
					}
				}
			})
		}
	}
}

func staticCreds(key, secret string) aws.CredentialsProvider {
	return aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{AccessKeyID: key, SecretAccessKey: secret, Source: "test"}, nil
	})
}

// tamper changes a request after the SDK signed it: the last byte of its
// body, or for a bodiless GET its path, as a proxy in between might.
type tamper struct{ next aws.HTTPClient }

func (c tamper) Do(r *http.Request) (*http.Response, error) {
	if r.Body == nil || r.Body == http.NoBody {
		r.URL.Path += "x"
		return c.next.Do(r)
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	body[len(body)-1] ^= 1
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return c.next.Do(r)
}
