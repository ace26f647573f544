package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The command-line tool's own reads (drainpipe check: CloudFormation,
// Lambda, SNS; the preflight decisions) must not reach the bootstrap: each
// SDK service package adds to its size and to every cold start.
func TestCLIOnlyPackagesNotLinked(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-tags", "lambda.norpc", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, banned := range []string{"github.com/aws/aws-sdk-go-v2/service/cloudformation", "github.com/aws/aws-sdk-go-v2/service/lambda",
			"github.com/aws/aws-sdk-go-v2/service/sns", "github.com/drainpipe/drainpipe/internal/preflight"} {
			if pkg == banned || strings.HasPrefix(pkg, banned+"/") {
				t.Errorf("the bootstrap links %s, which only the command-line tool needs", pkg)
			}
		}
	}
}
