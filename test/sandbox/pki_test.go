package sandbox

import (
	"crypto/x509"
	"errors"
	"net"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/tools/clientcmd"
)

func TestIssuedCertificatesVerify(t *testing.T) {
	ca, err := newKeyPair(certSpec{commonName: "ca"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.cert)
	tests := []struct {
		name  string
		spec  certSpec
		usage x509.ExtKeyUsage
		host  string
	}{
		{"serving by IP", certSpec{commonName: "api", server: true, ips: []net.IP{net.IPv4(127, 0, 0, 1)}}, x509.ExtKeyUsageServerAuth, "127.0.0.1"},
		{"serving by name", certSpec{commonName: "api", server: true, dnsNames: []string{"kubernetes.default.svc"}}, x509.ExtKeyUsageServerAuth, "kubernetes.default.svc"},
		{"client", certSpec{commonName: "admin", orgs: []string{"system:masters"}, client: true}, x509.ExtKeyUsageClientAuth, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kp, err := newKeyPair(tt.spec, ca)
			if err != nil {
				t.Fatal(err)
			}
			_, err = kp.cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: tt.host, KeyUsages: []x509.ExtKeyUsage{tt.usage}})
			if err != nil {
				t.Errorf("verifying: %v", err)
			}
			if diff := cmp.Diff(tt.spec.orgs, kp.cert.Subject.Organization); diff != "" {
				t.Errorf("organizations (-want +got):\n%s", diff)
			}
		})
	}
}

func TestKubeconfigLoads(t *testing.T) {
	ca, err := newKeyPair(certSpec{commonName: "ca"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	client, err := newKeyPair(certSpec{commonName: "admin", client: true}, ca)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := writeKubeconfig(path, "https://127.0.0.1:6443", ca, client); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatalf("loading: %v", err)
	}
	got := []string{cfg.Host, string(cfg.CAData), string(cfg.CertData)}
	want := []string{"https://127.0.0.1:6443", string(ca.certPEM), string(client.certPEM)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kubeconfig (-want +got):\n%s", diff)
	}
}

func TestCheckBinaries(t *testing.T) {
	if err := CheckBinaries(t.TempDir()); !errors.Is(err, ErrNoBinaries) {
		t.Errorf("CheckBinaries(empty dir) = %v, want ErrNoBinaries", err)
	}
}

func TestDefaultBinDir(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"override", map[string]string{"DRAINPIPE_SANDBOX_BIN": "/opt/bin", "HOME": "/home/u"}, "/opt/bin"},
		{"xdg", map[string]string{"XDG_CACHE_HOME": "/xdg", "HOME": "/home/u"}, "/xdg/drainpipe/sandbox-" + DefaultKubernetesVersion + "/bin"},
		{"home", map[string]string{"HOME": "/home/u"}, "/home/u/.cache/drainpipe/sandbox-" + DefaultKubernetesVersion + "/bin"},
		{"version", map[string]string{"DRAINPIPE_K8S_VERSION": "v1.32.13", "HOME": "/home/u"}, "/home/u/.cache/drainpipe/sandbox-v1.32.13/bin"},
		{"override wins", map[string]string{"DRAINPIPE_SANDBOX_BIN": "/opt/bin", "DRAINPIPE_K8S_VERSION": "v1.32.13"}, "/opt/bin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DefaultBinDir(func(k string) string { return tt.env[k] }); got != tt.want {
				t.Errorf("DefaultBinDir = %q, want %q", got, tt.want)
			}
		})
	}
}
