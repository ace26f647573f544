package main

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"sigs.k8s.io/aws-iam-authenticator/pkg/token"
)

// upstreamToken signs a token for cluster with the authenticator's own
// generator, from the environment's static credentials and region.
func upstreamToken(_ context.Context, cluster string) (string, error) {
	region := os.Getenv("AWS_REGION")
	if region == "" {
		return "", fmt.Errorf("AWS_REGION is not set")
	}
	creds := credentials.NewStaticCredentialsProvider(os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"), os.Getenv("AWS_SESSION_TOKEN"))
	client := sts.NewFromConfig(aws.Config{Region: region, Credentials: creds})
	gen, err := token.NewGenerator(false, false)
	if err != nil {
		return "", fmt.Errorf("creating generator: %w", err)
	}
	tok, err := gen.GetWithSTS(cluster, client)
	if err != nil {
		return "", fmt.Errorf("generating token: %w", err)
	}
	return tok.Token, nil
}
