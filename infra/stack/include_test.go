package stack

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/cloudformationinclude"
	"github.com/aws/jsii-runtime-go"
)

// TestStandaloneIncludes is what docs/deploy.md tells a TypeScript or Python
// CDK user to do: include the standalone template in a stack of their own
// with CfnInclude (the same jsii library their language calls), setting
// its parameters. Every resource comes through, the parameters set are
// gone from the result, and the queue is named after the including stack.
func TestStandaloneIncludes(t *testing.T) {
	p := testProps(t)
	p.Clusters = []string{"prod"}
	s, err := NewStandalone(awscdk.NewApp(nil), "Standalone", p)
	if err != nil {
		t.Fatalf("NewStandalone: %v", err)
	}
	raw, err := json.Marshal(assertions.Template_FromStack(s, nil).ToJSON())
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "drainpipe.template.json")
	if err := os.WriteFile(file, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	alone := templateOf(t, s)

	st := awscdk.NewStack(awscdk.NewApp(nil), jsii.String("Platform"), nil)
	set := map[string]any{
		"CodeBucket": "platform-artifacts",
		"CodeKey":    "drainpipe-0.1.0-linux-arm64.zip",
		// A CommaDelimitedList parameter takes a list: a string here fails
		// with "array.some is not a function".
		"Clusters": []any{"prod"},
	}
	inc := cloudformationinclude.NewCfnInclude(st, jsii.String("Drainpipe"), &cloudformationinclude.CfnIncludeProps{
		TemplateFile: jsii.String(file),
		Parameters:   &set,
	})
	// The included resources are reachable by logical ID, to wire further.
	for id, r := range alone.Resources {
		if r.Type == "AWS::SQS::Queue" && inc.GetResource(jsii.String(id)) == nil {
			t.Errorf("GetResource(%s): nil", id)
		}
	}
	got := templateOf(t, st)
	if len(got.Resources) != len(alone.Resources) {
		t.Errorf("included %d resources, the template has %d", len(got.Resources), len(alone.Resources))
	}
	for name := range set {
		if _, ok := got.Parameters[name]; ok {
			t.Errorf("parameter %s still in the including stack, though set", name)
		}
	}
	b, err := json.Marshal(got.Resources)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"platform-artifacts"`, `"drainpipe-0.1.0-linux-arm64.zip"`, `"-queue"`, `"prod"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("included resources lack %s", want)
		}
	}
}
