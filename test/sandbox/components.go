package sandbox

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/client-go/tools/clientcmd"
)

// KwokNodeAnnotation marks the nodes kwok simulates; fixture nodes carry it
// with the value "fake".
const KwokNodeAnnotation = "kwok.x-k8s.io/node"

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

// runFunc starts one component and records it for Stop.
type runFunc func(name string, args ...string) (*process, error)

// runner starts components from binDir, logging into logDir.
func (s *Sandbox) runner(binDir, logDir string, detach bool) runFunc {
	return func(name string, args ...string) (*process, error) {
		proc, err := spawn(s.launch, binDir, logDir, name, detach, args...)
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		s.procs = append(s.procs, proc)
		s.mu.Unlock()
		s.log.Info("sandbox component started", "component", name, "pid", proc.pid)
		return proc, nil
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
	claim, err := claimPorts(portLockDir(), portLow, portHigh, 7)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.claim = claim
	s.mu.Unlock()
	pn := claim.ports
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
	run := s.runner(opts.BinDir, p.logs, opts.Detach)
	apiArgs := apiserverArgs(p, pt)
	if opts.EKSAuth != nil { // the API server's token webhook, up first
		webhook, err := s.startWebhook(ctx, opts, run, pn[6], server, ca.certPEM)
		if err != nil {
			return err
		}
		apiArgs = append(apiArgs, webhookArgs(webhook)...)
	}
	apiArgs = append(apiArgs, opts.APIServerFlags...)
	// etcd and the API server start together (the API server retries etcd);
	// the others wait for the API server because kube-controller-manager
	// gives up if it is not healthy within seconds.
	etcd, err := run("etcd", etcdArgs(s.dir, pt)...)
	if err != nil {
		return err
	}
	api, err := run("kube-apiserver", apiArgs...)
	if err != nil {
		return err
	}
	etcd.ready = httpReady(hc, fmt.Sprintf("http://127.0.0.1:%d/health", pt.etcd))
	api.ready = httpReady(hc, server+"/readyz")
	for _, proc := range []*process{etcd, api} {
		if err := proc.ready(ctx, proc); err != nil {
			return err
		}
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
		started[name].ready = httpReady(hc, checks[name])
	}
	for _, proc := range started {
		if err := proc.ready(ctx, proc); err != nil {
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

// httpReady is a health check by waitHealthy.
func httpReady(hc *http.Client, url string) readyFunc {
	return func(ctx context.Context, p *process) error { return waitHealthy(ctx, hc, p, url) }
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
