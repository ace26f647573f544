package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/fleet"
	"github.com/drainpipe/drainpipe/test/lambdart"
	"github.com/drainpipe/drainpipe/test/sandbox"
)

// sandboxOptions turns the API server's EKS token webhook on in EKS mode.
func sandboxOptions(eksMode bool) sandbox.Options {
	if !eksMode {
		return sandbox.Options{}
	}
	return sandbox.Options{EKSAuth: &sandbox.EKSAuth{Cluster: clusterName}}
}

// eksAccess prepares EKS mode: deploy/rbac.yaml applied as a user would,
// the EKS fake describing the cluster with the sandbox's endpoint and CA,
// and the environment giving the bootstrap the mapped role's credentials
// (and no kubeconfig).
func eksAccess(ctx context.Context, w io.Writer, sb *sandbox.Sandbox, sc *scene, fake *awsfake.Server) ([]string, error) {
	section(w, "EKS access: the aws-iam-authenticator webhook, deploy/rbac.yaml, DescribeCluster")
	c, ok := sb.EKS()
	if !ok {
		return nil, fmt.Errorf("the sandbox runs without EKS authentication")
	}
	root, err := lambdart.ModuleRoot(ctx, ".")
	if err != nil {
		return nil, err
	}
	rbac := filepath.Join(root, "deploy", "rbac.yaml")
	t := &fixtureT{name: "demo"}
	actx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := t.step(func() { sc.env.ApplyRBAC(actx, rbac, sandbox.DrainpipeGroup) }); err != nil {
		return nil, fmt.Errorf("applying %s: %w", rbac, err)
	}
	// DescribeCluster's answer, and the role's session credentials the
	// bootstrap signs its AWS calls with (the fakes verify signatures).
	fleet.RegisterEKS(fake, c)
	fmt.Fprintf(w, "  kube-apiserver asks aws-iam-authenticator %s (its webhook, on 127.0.0.1) who a bearer token is;\n",
		sandbox.AuthenticatorVersion)
	fmt.Fprintf(w, "  its fake STS checks the token's SigV4 signature, including the cluster name %s\n", c.Name)
	fmt.Fprintf(w, "  role %s maps to user and group %s, bound by %s\n", sandbox.FunctionRole, sandbox.DrainpipeGroup, rbac)
	fmt.Fprintf(w, "  EKS DescribeCluster(%s) answers %s and the sandbox CA\n", c.Name, c.Endpoint)
	return c.Function.Env(), nil
}
