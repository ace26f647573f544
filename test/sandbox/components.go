package sandbox

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/tools/clientcmd"
)

//go:embed stages/*.yaml
var stages embed.FS

// KwokNodeAnnotation marks the nodes kwok simulates; fixture nodes carry it
// with the value "fake".
const KwokNodeAnnotation = "kwok.x-k8s.io/node"

// controllers are the kube-controller-manager loops drains depend on. Node
// lifecycle and taint eviction stay off: kwok nodes have no real kubelet
// heartbeat to judge, and their evictions would race the drain under test.
var controllers = []string{
	"replicaset-controller", "deployment-controller", "daemonset-controller",
	"statefulset-controller", "job-controller", "disruption-controller",
	"garbage-collector-controller", "serviceaccount-controller", "namespace-controller",
	"pod-garbage-collector-controller", "root-ca-certificate-publisher-controller",
}

// paths are the files a sandbox generates.
type paths struct {
	dir, pki, logs              string
	ca, servingCert, servingKey string
	saPub, saKey                string
	admin, kcm, scheduler, kwok string // kubeconfigs
	schedulerConfig, kwokConfig string
	state                       string
}

func newPaths(dir string) paths {
	pki := filepath.Join(dir, "pki")
	return paths{
		dir: dir, pki: pki, logs: filepath.Join(dir, "logs"),
		ca:    filepath.Join(pki, "ca.crt"),
		admin: filepath.Join(dir, "admin.kubeconfig"), kcm: filepath.Join(pki, "controller-manager.kubeconfig"),
		scheduler: filepath.Join(pki, "scheduler.kubeconfig"), kwok: filepath.Join(pki, "kwok.kubeconfig"),
		schedulerConfig: filepath.Join(dir, "scheduler.yaml"), kwokConfig: filepath.Join(dir, "kwok.yaml"),
		state: filepath.Join(dir, stateFile),
	}
}

// ports of one sandbox.
type ports struct{ etcd, etcdPeer, apiserver, kcm, scheduler, kwok int }

func (s *Sandbox) start(ctx context.Context, opts Options) error {
	p := newPaths(s.dir)
	for _, d := range []string{p.pki, p.logs, filepath.Join(s.dir, "etcd")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("creating %s: %w", d, err)
		}
	}
	pn, err := freePorts(6)
	if err != nil {
		return err
	}
	pt := ports{pn[0], pn[1], pn[2], pn[3], pn[4], pn[5]}
	server := "https://127.0.0.1:" + strconv.Itoa(pt.apiserver)
	ca, err := writePKI(&p, server)
	if err != nil {
		return err
	}
	if err := writeConfigs(p, pt); err != nil {
		return err
	}
	s.kubeconfig = p.admin
	if s.config, err = clientcmd.BuildConfigFromFlags("", p.admin); err != nil {
		return fmt.Errorf("loading %s: %w", p.admin, err)
	}
	s.config.QPS, s.config.Burst = 500, 1000
	hc := healthClient(ca, s.config.CertData, s.config.KeyData)

	s.launch = newLauncher()
	run := func(name string, args ...string) (*process, error) {
		proc, err := spawn(s.launch, opts.BinDir, p.logs, name, opts.Detach, args...)
		if err != nil {
			return nil, err
		}
		s.procs = append(s.procs, proc)
		s.log.Info("sandbox component started", "component", name, "pid", proc.pid)
		return proc, nil
	}
	// etcd and the API server start together (the API server retries etcd);
	// the others wait for the API server because kube-controller-manager
	// gives up if it is not healthy within seconds.
	etcd, err := run("etcd", etcdArgs(s.dir, pt)...)
	if err != nil {
		return err
	}
	api, err := run("kube-apiserver", apiserverArgs(p, pt)...)
	if err != nil {
		return err
	}
	if err := waitHealthy(ctx, hc, etcd, fmt.Sprintf("http://127.0.0.1:%d/health", pt.etcd)); err != nil {
		return err
	}
	if err := waitHealthy(ctx, hc, api, server+"/readyz"); err != nil {
		return err
	}
	checks := map[string]string{
		"kube-controller-manager": fmt.Sprintf("https://127.0.0.1:%d/healthz", pt.kcm),
		"kube-scheduler":          fmt.Sprintf("https://127.0.0.1:%d/healthz", pt.scheduler),
		"kwok":                    fmt.Sprintf("http://127.0.0.1:%d/healthz", pt.kwok),
	}
	started := map[string]*process{}
	for name, args := range map[string][]string{
		"kube-controller-manager": kcmArgs(p, pt),
		"kube-scheduler":          schedulerArgs(p, pt),
		"kwok":                    kwokArgs(p, pt),
	} {
		if started[name], err = run(name, args...); err != nil {
			return err
		}
	}
	for name, url := range checks {
		if err := waitHealthy(ctx, hc, started[name], url); err != nil {
			return err
		}
	}
	return s.writeState(p.state)
}

func writePKI(p *paths, server string) (*keyPair, error) {
	ca, err := newKeyPair(certSpec{commonName: "drainpipe-sandbox-ca"}, nil)
	if err != nil {
		return nil, err
	}
	if p.ca, _, err = ca.write(p.pki, "ca"); err != nil {
		return nil, err
	}
	// One serving certificate for every loopback endpoint, with the names
	// in-cluster clients use for the API server.
	serving, err := newKeyPair(certSpec{
		commonName: "kube-apiserver", server: true,
		dnsNames: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		ips:      []net.IP{net.IPv4(127, 0, 0, 1), net.IPv4(10, 96, 0, 1)},
	}, ca)
	if err != nil {
		return nil, err
	}
	if p.servingCert, p.servingKey, err = serving.write(p.pki, "serving"); err != nil {
		return nil, err
	}
	if p.saPub, p.saKey, err = serviceAccountKeys(p.pki); err != nil {
		return nil, err
	}
	clients := []struct {
		path string
		spec certSpec
	}{
		{p.admin, certSpec{commonName: "drainpipe-admin", orgs: []string{"system:masters"}, client: true}},
		// The controller manager runs every loop under one identity, so it
		// needs more than system:kube-controller-manager's own role.
		{p.kcm, certSpec{commonName: "system:kube-controller-manager", orgs: []string{"system:masters"}, client: true}},
		{p.scheduler, certSpec{commonName: "system:kube-scheduler", client: true}},
		{p.kwok, certSpec{commonName: "kwok", orgs: []string{"system:masters"}, client: true}},
	}
	for _, c := range clients {
		kp, err := newKeyPair(c.spec, ca)
		if err != nil {
			return nil, err
		}
		if err := writeKubeconfig(c.path, server, ca, kp); err != nil {
			return nil, err
		}
	}
	return ca, nil
}

func writeConfigs(p paths, pt ports) error {
	sched := fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %q
  qps: 500
  burst: 1000
leaderElection:
  leaderElect: false
percentageOfNodesToScore: 100
profiles:
- schedulerName: default-scheduler
  plugins:
    # Node affinity outweighs everything else, so a preferred node
    # affinity places pods deterministically (fixtures put workloads on a
    # node that way, and replacements land elsewhere once it is cordoned);
    # resource fit still spreads pods that state no preference.
    score:
      disabled:
      - name: "*"
      enabled:
      - name: NodeAffinity
        weight: 20
      - name: TaintToleration
        weight: 1
      - name: NodeResourcesFit
        weight: 1
`, p.scheduler)
	if err := os.WriteFile(p.schedulerConfig, []byte(sched), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", p.schedulerConfig, err)
	}
	var b strings.Builder
	b.WriteString(`apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokConfiguration
options:
  podPlayStageParallelism: 16
  nodePlayStageParallelism: 4
`)
	entries, err := stages.ReadDir("stages")
	if err != nil {
		return fmt.Errorf("reading embedded stages: %w", err)
	}
	for _, e := range entries {
		data, err := stages.ReadFile("stages/" + e.Name())
		if err != nil {
			return fmt.Errorf("reading embedded stage %s: %w", e.Name(), err)
		}
		b.WriteString("---\n")
		b.Write(data)
	}
	if err := os.WriteFile(p.kwokConfig, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", p.kwokConfig, err)
	}
	return nil
}

func etcdArgs(dir string, pt ports) []string {
	client := fmt.Sprintf("http://127.0.0.1:%d", pt.etcd)
	peer := fmt.Sprintf("http://127.0.0.1:%d", pt.etcdPeer)
	return []string{
		"--name=sandbox", "--data-dir=" + filepath.Join(dir, "etcd"),
		"--listen-client-urls=" + client, "--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer, "--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=sandbox=" + peer,
		"--unsafe-no-fsync", "--log-level=warn",
	}
}

func apiserverArgs(p paths, pt ports) []string {
	return []string{
		fmt.Sprintf("--etcd-servers=http://127.0.0.1:%d", pt.etcd),
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", pt.apiserver),
		"--tls-cert-file=" + p.servingCert, "--tls-private-key-file=" + p.servingKey,
		"--client-ca-file=" + p.ca,
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + p.saPub, "--service-account-signing-key-file=" + p.saKey,
		"--service-cluster-ip-range=10.96.0.0/16",
		"--endpoint-reconciler-type=none",
		// On EKS the node lifecycle controller lifts the not-ready taint
		// this plugin sets at registration; it does not run here.
		"--disable-admission-plugins=TaintNodesByCondition",
		"--allow-privileged=true", "--profiling=false",
	}
}

// servingArgs are the secure-serving flags kube-controller-manager and
// kube-scheduler share; their /healthz is how readiness is awaited.
func servingArgs(p paths, kubeconfig string, port int) []string {
	return []string{
		"--bind-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", port),
		"--tls-cert-file=" + p.servingCert, "--tls-private-key-file=" + p.servingKey,
		"--authentication-kubeconfig=" + kubeconfig, "--authorization-kubeconfig=" + kubeconfig,
		// The API server has no front proxy: trust client certificates from
		// our CA directly instead of looking the bundles up in-cluster.
		"--authentication-skip-lookup", "--client-ca-file=" + p.ca,
	}
}

func kcmArgs(p paths, pt ports) []string {
	return append(servingArgs(p, p.kcm, pt.kcm),
		"--kubeconfig="+p.kcm,
		"--leader-elect=false",
		"--controllers="+strings.Join(controllers, ","),
		"--root-ca-file="+p.ca,
		"--kube-api-qps=500", "--kube-api-burst=1000",
		"--profiling=false",
	)
}

func schedulerArgs(p paths, pt ports) []string {
	return append(servingArgs(p, p.scheduler, pt.scheduler), "--config="+p.schedulerConfig, "--profiling=false")
}

func kwokArgs(p paths, pt ports) []string {
	return []string{
		"--kubeconfig=" + p.kwok, "-c", p.kwokConfig,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=" + KwokNodeAnnotation + "=fake",
		fmt.Sprintf("--server-address=127.0.0.1:%d", pt.kwok),
		// Wide enough for benchmarks with a thousand pods.
		"--cidr=10.128.0.0/16",
	}
}

// healthClient trusts the sandbox CA and presents the admin certificate.
func healthClient(ca *keyPair, certPEM, keyPEM []byte) *http.Client {
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	tlsCfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if cert, err := tls.X509KeyPair(certPEM, keyPEM); err == nil {
		tlsCfg.Certificates = []tls.Certificate{cert}
	}
	return &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsCfg}}
}

// waitHealthy polls url until it answers 200, the process exits or ctx ends.
func waitHealthy(ctx context.Context, hc *http.Client, proc *process, url string) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last string
	for {
		if done, err := proc.exited(); done {
			return err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return fmt.Errorf("building health request for %s: %w", proc.name, err)
		}
		resp, err := hc.Do(req)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("%s: %s", resp.Status, body)
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s to be healthy (last answer: %s): %w", proc.name, last, ctx.Err())
		case <-tick.C:
		}
	}
}

// stateFile records the PIDs of a sandbox in its directory, so another
// process (make sandbox-down) can stop it.
const stateFile = "sandbox.json"

type state struct {
	Kubeconfig string      `json:"kubeconfig"`
	Processes  []stateProc `json:"processes"`
}

type stateProc struct {
	Name string `json:"name"`
	Path string `json:"path"`
	PID  int    `json:"pid"`
}

func (s *Sandbox) writeState(path string) error {
	st := state{Kubeconfig: s.kubeconfig}
	for _, p := range s.procs {
		st.Processes = append(st.Processes, stateProc{Name: p.name, Path: p.path, PID: p.pid})
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding sandbox state: %w", err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
