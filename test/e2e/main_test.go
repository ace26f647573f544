package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/test/lambdart"
	"github.com/drainpipe/drainpipe/test/sandbox"
)

// TestMain's shared sandbox authenticates EKS tokens for cluster served
// through the aws-iam-authenticator webhook (client certificates still work).
func TestMain(m *testing.M) {
	sandbox.MainWith(m, sandbox.Options{EKSAuth: &sandbox.EKSAuth{Cluster: served}})
}

// built is the bootstrap every test of this binary runs.
var built struct {
	once sync.Once
	path string
	err  error
}

// bootstrapEnv names a prebuilt bootstrap to test instead of building one
// (an arm64 one runs too where qemu-user-static is registered).
const bootstrapEnv = "DRAINPIPE_E2E_BOOTSTRAP"

// bootstrap returns the path of the real bootstrap, building it once per
// test binary exactly as `make build-local` does, into dist/local.
func bootstrap(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test: builds the bootstrap; skipped with -short")
	}
	built.once.Do(func() {
		if p := os.Getenv(bootstrapEnv); p != "" {
			built.path = p
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		var root string
		root, built.err = lambdart.ModuleRoot(ctx, ".")
		if built.err != nil {
			return
		}
		if built.err = lambdaPackage(root); built.err != nil {
			return
		}
		built.path = filepath.Join(root, "dist", "local", "bootstrap")
		if built.err = os.MkdirAll(filepath.Dir(built.path), 0o755); built.err != nil {
			return
		}
		built.err = lambdart.Build{Dir: root, Package: "./lambda", Output: built.path, Strip: true}.Run(ctx)
	})
	if built.err != nil {
		t.Fatalf("building the bootstrap: %v", built.err)
	}
	return built.path
}

// lambdaPackage fails unless root/lambda holds the bootstrap's Go files: if
// the package moves, the suite must fail, not skip every test.
func lambdaPackage(root string) error {
	mains, err := filepath.Glob(filepath.Join(root, "lambda", "*.go"))
	if err != nil || len(mains) == 0 {
		return fmt.Errorf("no Go files in %s: the bootstrap's package moved? (update bootstrap in test/e2e)", filepath.Join(root, "lambda"))
	}
	return nil
}

// testContext bounds a test; generous, since the machine is shared.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// start runs the bootstrap with env on top of the harness's Lambda
// environment; -v shows its output as it comes.
func start(t *testing.T, env ...string) *lambdart.Runtime {
	t.Helper()
	// The function's ARN names us-west-2, the region of the events the
	// tests send: the handler rejects envelopes from other regions.
	opts := lambdart.Options{Bootstrap: bootstrap(t), Env: env, FunctionName: "drainpipe-e2e", Region: "us-west-2"}
	if testing.Verbose() {
		opts.Stdout = t.Output()
	}
	return lambdart.Start(t, opts)
}
