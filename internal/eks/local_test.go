package eks

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/drainpipe/drainpipe/test/sandbox"
)

func TestMain(m *testing.M) { sandbox.Main(m) }

func writeKubeconfig(t *testing.T, current string, servers map[string]*apiServer) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	for name, s := range servers {
		cfg.Clusters[name] = &clientcmdapi.Cluster{Server: s.URL, CertificateAuthorityData: s.caPEM()}
		cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: "local-" + name}
		cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	}
	cfg.CurrentContext = current
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLocalPicksContextByClusterName(t *testing.T) {
	blue, green := newAPIServer(t, 0, nil), newAPIServer(t, 0, nil)
	l, err := NewLocal(writeKubeconfig(t, "blue", map[string]*apiServer{"blue": blue, "green": green}), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	reach(ctx, t, l, "green", "blue", "unnamed")
	blueAuth, _ := blue.seen()
	greenAuth, _ := green.seen()
	if len(greenAuth) != 1 || greenAuth[0] != "Bearer local-green" {
		t.Errorf("green server saw %v, want one request with its token", greenAuth)
	}
	// "blue" by name, "unnamed" through the current context.
	if len(blueAuth) != 2 {
		t.Errorf("blue server saw %d requests, want 2", len(blueAuth))
	}
	if k1, _ := l.Client(ctx, "green"); k1 == nil {
		t.Error("cached client is nil")
	}
}

func TestNewLocalErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "absent")
	garbage := filepath.Join(t.TempDir(), "garbage")
	if err := os.WriteFile(garbage, []byte("{not yaml: ["), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"", missing, garbage} {
		if _, err := NewLocal(path, 0, 0); err == nil {
			t.Errorf("NewLocal(%q) error = nil, want one", path)
		}
	}
}

func TestLocalOnSandbox(t *testing.T) {
	sb := sandbox.ForTest(t)
	l, err := NewLocal(sb.KubeconfigPath(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	k, err := l.Client(ctx, "any-cluster")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
		t.Errorf("getting namespace default through the sandbox kubeconfig: %v", err)
	}
}

// UseContext sends every cluster, even one named after another context,
// through the chosen context; an unknown one is refused.
func TestLocalUseContext(t *testing.T) {
	blue, green := newAPIServer(t, 0, nil), newAPIServer(t, 0, nil)
	l, err := NewLocal(writeKubeconfig(t, "blue", map[string]*apiServer{"blue": blue, "green": green}), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.UseContext("typo"); err == nil {
		t.Error("UseContext(typo) = nil, want an error")
	}
	if err := l.UseContext("green"); err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	reach(ctx, t, l, "blue", "unnamed")
	blueAuth, _ := blue.seen()
	greenAuth, _ := green.seen()
	if len(blueAuth) != 0 || len(greenAuth) != 2 {
		t.Errorf("blue saw %d requests, green %d; want 0 and 2", len(blueAuth), len(greenAuth))
	}
}

// reach gets node n1 of each cluster through l.
func reach(ctx context.Context, t *testing.T, l *Local, clusters ...string) {
	t.Helper()
	for _, cluster := range clusters {
		k, err := l.Client(ctx, cluster)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := k.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}
