package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/drainpipe/drainpipe/internal/eks"
	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/sandbox"
)

// awsConfig is an SDK configuration with id's credentials, the fakes'
// region, and the EKS fake as endpoint.
func awsConfig(fake *awsfake.Server, id sandbox.AWSIdentity) aws.Config {
	return aws.Config{
		Region:       awsfake.Region,
		BaseEndpoint: aws.String(fake.URL()),
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: id.AccessKeyID, SecretAccessKey: id.SecretAccessKey, SessionToken: id.SessionToken}, nil
		}),
	}
}

// Drainpipe's own clients (internal/eks) with a clock 20 minutes behind:
// every token is past the 15 minutes EKS allows, the one re-signed after
// the first 401 too, so the API server refuses; on time, the same
// clients are let in.
func testEKSExpired(t *testing.T) {
	ctx := testContext(t)
	_, c := eksCluster(t)
	fake := awsfake.New()
	t.Cleanup(fake.Close)
	fake.AddCluster(awsfake.Cluster{Name: served, Endpoint: c.Endpoint, CAData: c.CAData})
	for _, tc := range []struct {
		name string
		skew time.Duration
	}{{"20 minutes late", -20 * time.Minute}, {"on time", 0}} {
		clusters := eks.New(awsConfig(fake, c.Function), eks.Options{Now: func() time.Time { return time.Now().Add(tc.skew) }})
		client, err := clusters.Client(ctx, served)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		user, err := whoAmI(ctx, client.AuthenticationV1().SelfSubjectReviews())
		switch {
		case tc.skew != 0 && !apierrors.IsUnauthorized(err):
			t.Errorf("%s: got user %+v, error %v; want Unauthorized", tc.name, user, err)
		case tc.skew == 0 && (err != nil || user.Username != sandbox.DrainpipeGroup):
			t.Errorf("%s: got user %+v, error %v; want %s", tc.name, user, err, sandbox.DrainpipeGroup)
		}
	}
}

// TestEKSTokenConformance: a token from aws-iam-authenticator's own
// generator and one from Drainpipe's signer both get through the API
// server as user and group drainpipe (test/sandbox's
// TestWebhookReviewsTokens shows they are the same bytes when signed at the
// same second).
func TestEKSTokenConformance(t *testing.T) {
	ctx := testContext(t)
	sb, c := eksCluster(t)
	fake := awsfake.New()
	t.Cleanup(fake.Close)
	upstream, err := sb.UpstreamToken(ctx, served, awsfake.Region, c.Function)
	if err != nil {
		t.Fatal(err)
	}
	// Ours signed a minute earlier, so the API server's token cache cannot
	// answer for it with upstream's review.
	ours, err := eks.NewSigner(awsConfig(fake, c.Function), func() time.Time { return time.Now().Add(-time.Minute) }).Token(ctx, served)
	if err != nil {
		t.Fatal(err)
	}
	for name, tok := range map[string]string{"aws-iam-authenticator": upstream, "drainpipe": ours.Bearer()} {
		client, err := kubernetes.NewForConfig(&rest.Config{Host: c.Endpoint, TLSClientConfig: rest.TLSClientConfig{CAData: c.CAData}, BearerToken: tok})
		if err != nil {
			t.Fatal(err)
		}
		user, err := whoAmI(ctx, client.AuthenticationV1().SelfSubjectReviews())
		if err != nil {
			t.Errorf("%s token: %v", name, err)
			continue
		}
		if user.Username != sandbox.DrainpipeGroup || !slices.Contains(user.Groups, sandbox.DrainpipeGroup) {
			t.Errorf("%s token: user %q groups %v, want %s in group %s", name, user.Username, user.Groups, sandbox.DrainpipeGroup, sandbox.DrainpipeGroup)
		}
		if arn := extra(user, "canonicalArn"); len(arn) != 1 || arn[0] != sandbox.FunctionRole {
			t.Errorf("%s token: canonical ARN %v, want %s", name, arn, sandbox.FunctionRole)
		}
	}
}

// extra is a user's extra value by key, compared case-insensitively.
func extra(u authenticationv1.UserInfo, key string) []string {
	for k, v := range u.Extra {
		if strings.EqualFold(k, key) {
			return v
		}
	}
	return nil
}
