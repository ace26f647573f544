package sandbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The sandbox's AWS account and the function's role, as the webhook maps it.
const (
	eksAccount    = "111122223333"
	FunctionRole  = "arn:aws:iam::" + eksAccount + ":role/drainpipe-function"
	UnmappedRole  = "arn:aws:iam::" + eksAccount + ":role/not-in-aws-auth"
	webhookBinary = "authwebhook"
	// AuthenticatorVersion is the aws-iam-authenticator release the webhook runs.
	AuthenticatorVersion = "v0.7.13"
	// DrainpipeGroup is the Kubernetes group (and user) the function's role
	// maps to, as the stack's access entry or the aws-auth ConfigMap do.
	DrainpipeGroup = "drainpipe"
)

// EKSAuth turns on EKS authentication: the real aws-iam-authenticator
// webhook (test/sandbox/authwebhook) answers kube-apiserver's TokenReviews,
// with a fake STS that checks each token's signature.
type EKSAuth struct {
	// Cluster is the name tokens must be signed for; "sandbox" when empty.
	Cluster string
}

// AWSIdentity is a role's temporary credentials, known to the fake STS.
type AWSIdentity struct {
	RoleARN         string
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
}

// Env returns the credentials as AWS SDK environment variables.
func (id AWSIdentity) Env() []string {
	return []string{
		"AWS_ACCESS_KEY_ID=" + id.AccessKeyID,
		"AWS_SECRET_ACCESS_KEY=" + id.SecretAccessKey,
		"AWS_SESSION_TOKEN=" + id.SessionToken,
	}
}

// EKSCluster is what eks:DescribeCluster says of an EKS-auth sandbox, and
// the identities its webhook knows.
type EKSCluster struct {
	Name     string
	Endpoint string // https://127.0.0.1:port
	CAData   []byte // PEM
	// Function is mapped to user and group drainpipe (FunctionRole).
	Function AWSIdentity
	// Unmapped is a valid AWS identity that no mapping names (UnmappedRole).
	Unmapped AWSIdentity
}

// EKS describes the sandbox as an EKS cluster; ok is false unless it was
// started with Options.EKSAuth.
func (s *Sandbox) EKS() (c EKSCluster, ok bool) {
	if s.eks == nil {
		return EKSCluster{}, false
	}
	return *s.eks, true
}

// webhookConfig is the authwebhook binary's configuration file.
type webhookConfig struct {
	ClusterID  string           `json:"clusterID"`
	Port       int              `json:"port"`
	StateDir   string           `json:"stateDir"`
	Kubeconfig string           `json:"kubeconfig"`
	MapRoles   []webhookRoleMap `json:"mapRoles"`
	Identities []stsIdentity    `json:"identities"`
}

type webhookRoleMap struct {
	RoleARN  string   `json:"rolearn"`
	Username string   `json:"username"`
	Groups   []string `json:"groups"`
}

type stsIdentity struct {
	AccessKeyID     string `json:"accessKeyId"`
	SecretAccessKey string `json:"secretAccessKey"`
	SessionToken    string `json:"sessionToken"`
	ARN             string `json:"arn"`
	UserID          string `json:"userId"`
	Account         string `json:"account"`
}

// newIdentity makes fresh credentials for role and what STS answers for
// them: the assumed-role ARN of a Lambda function's session.
func newIdentity(role string) (AWSIdentity, stsIdentity) {
	name := filepath.Base(role)
	id := AWSIdentity{RoleARN: role, AccessKeyID: "ASIA" + randomText(16), SecretAccessKey: randomText(40), SessionToken: randomText(64)}
	return id, stsIdentity{
		AccessKeyID: id.AccessKeyID, SecretAccessKey: id.SecretAccessKey, SessionToken: id.SessionToken,
		ARN:     "arn:aws:sts::" + eksAccount + ":assumed-role/" + name + "/" + name,
		UserID:  "AROA" + randomText(17) + ":" + name,
		Account: eksAccount,
	}
}

func randomText(n int) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// startWebhook writes the webhook's configuration, starts it and waits
// until it serves; it returns kube-apiserver's webhook kubeconfig path.
func (s *Sandbox) startWebhook(ctx context.Context, opts Options, run runFunc, port int, server string, caPEM []byte) (string, error) {
	dir := filepath.Join(s.dir, webhookBinary)
	cluster := opts.EKSAuth.Cluster
	if cluster == "" {
		cluster = "sandbox"
	}
	fn, fnSTS := newIdentity(FunctionRole)
	other, otherSTS := newIdentity(UnmappedRole)
	cfg := webhookConfig{
		ClusterID: cluster, Port: port,
		StateDir: filepath.Join(dir, "state"), Kubeconfig: filepath.Join(dir, "webhook.kubeconfig"),
		MapRoles:   []webhookRoleMap{{RoleARN: FunctionRole, Username: DrainpipeGroup, Groups: []string{DrainpipeGroup}}},
		Identities: []stsIdentity{fnSTS, otherSTS},
	}
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return "", fmt.Errorf("encoding webhook config: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("creating %s: %w", dir, err)
	}
	path := filepath.Join(dir, "config.json")
	if err := os.WriteFile(path, data, 0o600); err != nil { // holds secret keys
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	proc, err := run(webhookBinary, "serve", path)
	if err != nil {
		return "", err
	}
	proc.ready = func(ctx context.Context, p *process) error {
		return waitWebhook(ctx, p, filepath.Join(cfg.StateDir, "cert.pem"), port)
	}
	if err := proc.ready(ctx, proc); err != nil {
		return "", err
	}
	s.eks = &EKSCluster{Name: cluster, Endpoint: server, CAData: caPEM, Function: fn, Unmapped: other}
	return cfg.Kubeconfig, nil
}

// waitWebhook polls the webhook's /healthz, trusting the certificate it
// generates at start, until it answers 200, the process exits or ctx ends.
func waitWebhook(ctx context.Context, proc *process, certPath string, port int) error {
	url := "https://127.0.0.1:" + strconv.Itoa(port) + "/healthz"
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	last := "no certificate yet"
	for {
		if done, err := proc.exited(); done {
			return err
		}
		if pem, err := os.ReadFile(certPath); err == nil {
			pool := x509.NewCertPool()
			pool.AppendCertsFromPEM(pem)
			hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
			err := probe(ctx, hc, url)
			hc.CloseIdleConnections()
			if err == nil {
				return nil
			}
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s to be healthy (last: %s): %w", proc.name, last, ctx.Err())
		case <-tick.C:
		}
	}
}

func probe(ctx context.Context, hc *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("building request: %w", err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return errors.New(resp.Status)
	}
	return nil
}

// webhookArgs are kube-apiserver's flags for the token webhook.
func webhookArgs(kubeconfig string) []string {
	return []string{
		"--authentication-token-webhook-config-file=" + kubeconfig,
		// aws-iam-authenticator reads and answers authentication.k8s.io/v1beta1.
		"--authentication-token-webhook-version=v1beta1",
	}
}

// UpstreamToken signs a token for cluster with aws-iam-authenticator's own
// generator (the webhook binary's token command), with id's credentials,
// for conformance tests.
func (s *Sandbox) UpstreamToken(ctx context.Context, cluster, region string, id AWSIdentity) (string, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(s.binDir, webhookBinary), "token", cluster)
	cmd.Env = append([]string{"AWS_REGION=" + region, "AWS_EC2_METADATA_DISABLED=true", "HOME=" + s.dir}, id.Env()...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("running %s token: %w: %s", webhookBinary, err, stderr.String())
	}
	return strings.TrimSpace(string(out)), nil
}
