package live

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/ec2"

	"github.com/drainpipe/drainpipe/internal/version"
	"github.com/drainpipe/drainpipe/test/awsfake"
)

// Every AWS call names Drainpipe's version in its User-Agent (the SDK's
// app id), so CloudTrail shows which version described an instance or
// completed a hook.
func TestAWSCallsCarryTheVersion(t *testing.T) {
	fake := awsfake.New()
	defer fake.Close()
	fake.AddInstances(awsfake.Instance{ID: "i-0123456789abcdef0"})
	for _, kv := range fake.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	cfg, err := AWSConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ec2.NewFromConfig(cfg).DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{InstanceIds: []string{"i-0123456789abcdef0"}}); err != nil {
		t.Fatal(err)
	}
	calls := fake.CallsTo("DescribeInstances")
	if len(calls) != 1 {
		t.Fatalf("%d DescribeInstances calls, want 1", len(calls))
	}
	want := "app/" + version.Get().AppID()
	if ua := calls[0].UserAgent; !strings.Contains(" "+ua+" ", " "+want+" ") {
		t.Errorf("User-Agent %q lacks %q", ua, want)
	}
}
