// Command authwebhook is the sandbox's EKS token webhook: the real
// aws-iam-authenticator TokenReview server (pkg/server, with its pkg/token
// verifier and file mapper) in front of a fake STS that checks SigV4
// signatures itself. The sandbox starts it before kube-apiserver, which
// calls it through --authentication-token-webhook-config-file.
//
//	authwebhook serve CONFIG.json   serve until SIGTERM or SIGINT
//	authwebhook token CLUSTER       print a token from the authenticator's own
//	                                generator (credentials and region from the
//	                                environment), for conformance tests
//
// Everything listens on 127.0.0.1 only.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "authwebhook:", err)
		os.Exit(1)
	}
}

func run(args []string, out io.Writer) error {
	if len(args) != 2 {
		return errors.New("usage: authwebhook serve CONFIG.json | authwebhook token CLUSTER")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	switch args[0] {
	case "serve":
		cfg, err := loadConfig(args[1])
		if err != nil {
			return err
		}
		return serve(ctx, cfg)
	case "token":
		tok, err := upstreamToken(ctx, args[1])
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(out, tok)
		return err
	}
	return fmt.Errorf("unknown command %q", args[0])
}

// Config is what the sandbox writes for serve.
type Config struct {
	ClusterID  string     `json:"clusterID"`  // the cluster name tokens must be signed for
	Port       int        `json:"port"`       // the webhook's port on 127.0.0.1
	StateDir   string     `json:"stateDir"`   // the webhook's generated certificate and key
	Kubeconfig string     `json:"kubeconfig"` // written for --authentication-token-webhook-config-file
	MapRoles   []RoleMap  `json:"mapRoles"`   // aws-auth mapRoles entries
	Identities []Identity `json:"identities"` // principals the fake STS knows
}

// RoleMap is one aws-auth mapRoles entry.
type RoleMap struct {
	RoleARN  string   `json:"rolearn"`
	Username string   `json:"username"`
	Groups   []string `json:"groups"`
}

// Identity is a principal whose credentials the fake STS accepts, and what
// GetCallerIdentity answers for it.
type Identity struct {
	AccessKeyID     string `json:"accessKeyId"`
	SecretAccessKey string `json:"secretAccessKey"`
	SessionToken    string `json:"sessionToken"`
	ARN             string `json:"arn"`    // arn:aws:sts::ACCOUNT:assumed-role/ROLE/SESSION
	UserID          string `json:"userId"` // AROA...:SESSION
	Account         string `json:"account"`
}

func loadConfig(path string) (Config, error) {
	var c Config
	data, err := os.ReadFile(path)
	if err != nil {
		return c, fmt.Errorf("reading config: %w", err)
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return c, fmt.Errorf("decoding %s: %w", path, err)
	}
	switch {
	case c.ClusterID == "":
		return c, fmt.Errorf("%s: clusterID is empty", path)
	case c.Port <= 0 || c.Port > 65535:
		return c, fmt.Errorf("%s: port %d out of range", path, c.Port)
	case c.StateDir == "" || c.Kubeconfig == "":
		return c, fmt.Errorf("%s: stateDir and kubeconfig are required", path)
	}
	return c, nil
}
