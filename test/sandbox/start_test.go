package sandbox_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/test/sandbox"
)

// TestSideBySide starts a second sandbox next to the shared one: free
// ports keep them apart, both report the stamped version, kubectl can use
// the kubeconfig, and Stop leaves no process behind (the second's token
// webhook included).
func TestSideBySide(t *testing.T) {
	shared := sandbox.ForTest(t)
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	// Its own temporary directory, so a timeout or panic here is cleaned
	// up too (t.TempDir's cleanup would not run). It also runs the EKS
	// token webhook: that too must keep to loopback and free ports, and
	// stop with the rest.
	second, err := sandbox.Start(ctx, sandbox.Options{EKSAuth: &sandbox.EKSAuth{}})
	if err != nil {
		t.Fatalf("starting a second sandbox: %v", err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = second.Stop()
		}
	})
	if a, b := shared.RESTConfig().Host, second.RESTConfig().Host; a == b {
		t.Errorf("both sandboxes serve on %s", a)
	}
	for name, sb := range map[string]*sandbox.Sandbox{"shared": shared, "second": second} {
		client, err := kubernetes.NewForConfig(sb.RESTConfig())
		if err != nil {
			t.Fatalf("%s: creating client: %v", name, err)
		}
		v, err := client.Discovery().ServerVersion()
		if err != nil {
			t.Fatalf("%s: getting server version: %v", name, err)
		}
		if want := sandbox.KubernetesVersion(os.Getenv); v.GitVersion != want {
			t.Errorf("%s: server version %q, want %q", name, v.GitVersion, want)
		}
	}
	// The kubectl make sandbox-build builds, of the sandbox's version.
	kubectl := filepath.Join(sandbox.DefaultBinDir(os.Getenv), "kubectl")
	out, err := exec.CommandContext(ctx, kubectl, "--kubeconfig", second.KubeconfigPath(), "get", "namespaces", "-o", "name").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "namespace/default") {
		t.Errorf("kubectl get namespaces: %v (run make sandbox-build if %s is missing)\n%s", err, kubectl, out)
	}

	pids := second.PIDs()
	if _, ok := pids["authwebhook"]; !ok {
		t.Errorf("the second sandbox runs no token webhook: %v", pids)
	}
	if err := second.Stop(); err != nil {
		t.Fatalf("stopping: %v", err)
	}
	stopped = true
	if _, err := os.Stat(second.Dir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("sandbox directory %s after Stop: stat error %v, want it removed", second.Dir(), err)
	}
	for name, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("%s (pid %d) still exists after Stop: kill(0) = %v", name, pid, err)
		}
	}
}
