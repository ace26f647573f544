package e2e

import (
	"testing"

	"github.com/drainpipe/drainpipe/test/lambdart"
)

// The suite fails, rather than skipping every test, when the bootstrap's
// package is not where it builds it from.
func TestLambdaPackageFound(t *testing.T) {
	root, err := lambdart.ModuleRoot(testContext(t), ".")
	if err != nil {
		t.Fatal(err)
	}
	if err := lambdaPackage(root); err != nil {
		t.Errorf("lambdaPackage(module root) = %v", err)
	}
	if err := lambdaPackage(t.TempDir()); err == nil {
		t.Error("lambdaPackage(a directory without lambda/) = nil, want an error")
	}
}
