package stack

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
)

// TestTemplatesPassCfnLint (issue 25): the CDK template under several
// context variants, and the standalone template, pass cfn-lint as AWS
// would read them, with no flags. Skipped where cfn-lint is not installed.
func TestTemplatesPassCfnLint(t *testing.T) {
	lint, err := exec.LookPath("cfn-lint")
	if err != nil {
		t.Skip("cfn-lint is not installed (pip install cfn-lint)")
	}
	const kms = "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
	variants := map[string]func(*Props){
		"defaults": func(*Props) {},
		"trust and network": func(p *Props) {
			p.SubnetIDs, p.SecurityGroupIDs = []string{"subnet-0123456789abcdef0"}, []string{"sg-0123456789abcdef0"}
			p.SNSTopicARNs = []string{"arn:aws:sns:eu-west-1:123456789012:hooks"}
			p.SenderRoleARNs, p.OperatorRoleARNs = []string{redriveRole}, []string{operatorRole}
			p.ASGNotificationRole = true
			p.QueueAdminARNs, p.CodeSigningConfigARN = []string{"arn:aws:iam::123456789012:role/platform-admin"}, cscARN
		},
		"webhook, aws-auth, topic": func(p *Props) {
			p.WebhookSecretARN, p.WebhookKMSKeyARN = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:drainpipe/webhook", kms
			p.AWSAuthClusters = []string{"staging"}
			p.AlarmTopicARN = "arn:aws:sns:eu-west-1:123456789012:oncall"
		},
		"1 to 4 clusters, one on aws-auth": func(p *Props) {
			p.MaxClusters, p.AWSAuthClusters = 4, []string{"staging"}
		},
		"no groups, no sweep, no cordon queue, nothing reserved": func(p *Props) {
			p.ASGNames, p.ASGNamePrefix, p.SweepInterval, p.ReservedConcurrency = nil, "", 0, -1
			p.CordonConcurrency = -1
		},
	}
	dir := t.TempDir()
	// No flags: a plain `cfn-lint` run on the template must pass, so what
	// the stack knowingly does is acknowledged in the template itself.
	args := []string{"--"}
	write := func(name string, s awscdk.Stack) {
		raw, err := json.Marshal(assertions.Template_FromStack(s, nil).ToJSON())
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name+".json")
		if err := os.WriteFile(path, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, path)
	}
	for name, change := range variants {
		p := testProps(t)
		change(&p)
		write(name, newStack(t, p))
		s, err := NewStandalone(awscdk.NewApp(nil), "Standalone", p)
		if err != nil {
			t.Fatalf("%s: NewStandalone: %v", name, err)
		}
		write(name+" standalone", s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, lint, args...).CombinedOutput(); err != nil {
		t.Errorf("cfn-lint: %v\n%s", err, out)
	}
}
