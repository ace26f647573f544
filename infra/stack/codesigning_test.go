package stack

import (
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
)

const cscARN = "arn:aws:lambda:eu-west-1:123456789012:code-signing-config:csc-0f6ec4b2ef8d2a0a8"

// TestCodeSigningConfig (issue 39, item 8): codeSigningConfigArn reaches
// the function in both templates; a malformed one fails synth.
func TestCodeSigningConfig(t *testing.T) {
	p, err := FromContext(func(k string) any { return map[string]any{"codeSigningConfigArn": cscARN}[k] })
	if err != nil || p.CodeSigningConfigARN != cscARN {
		t.Fatalf("FromContext(codeSigningConfigArn) = %q, %v", p.CodeSigningConfigARN, err)
	}
	p = testProps(t)
	p.CodeSigningConfigARN = cscARN
	standalone, err := NewStandalone(awscdk.NewApp(nil), "Standalone", p)
	if err != nil {
		t.Fatalf("NewStandalone: %v", err)
	}
	for name, tpl := range map[string]template{"stack": synth(t, p), "standalone": templateOf(t, standalone)} {
		if got := tpl.byAlias(t, "Function").Properties["CodeSigningConfigArn"]; got != cscARN {
			t.Errorf("%s: function CodeSigningConfigArn = %v, want %s", name, got, cscARN)
		}
	}
	if got := synth(t, testProps(t)).byAlias(t, "Function").Properties["CodeSigningConfigArn"]; got != nil {
		t.Errorf("without the key: CodeSigningConfigArn = %v, want none", got)
	}
	for _, bad := range []string{
		"csc-0f6ec4b2ef8d2a0a8",
		"arn:aws:lambda:eu-west-1:123456789012:function:drainpipe",
		"arn:aws:lambda:eu-west-1:123456789012:code-signing-config:*",
		"arn:aws:signer:eu-west-1:123456789012:/signing-profiles/drainpipe",
	} {
		p := testProps(t)
		p.CodeSigningConfigARN = bad
		checkValidate(t, p, "codeSigningConfigArn: \""+bad+"\" is not a Lambda code signing configuration ARN")
	}
}
