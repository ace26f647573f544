package fleet

import (
	"fmt"

	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/sandbox"
)

// RegisterEKS makes fake answer eks:DescribeCluster for c (its name,
// endpoint and CA) and accept the function role's session credentials,
// which the bootstrap signs its AWS calls with in EKS mode (the fake
// verifies signatures). Registering again, with another Endpoint, is the
// cluster recreated under the same name.
func RegisterEKS(fake *awsfake.Server, c sandbox.EKSCluster) {
	fake.AddCluster(awsfake.Cluster{Name: c.Name, Endpoint: c.Endpoint, CAData: c.CAData})
	fake.AllowCredentials(c.Function.AccessKeyID, c.Function.SecretAccessKey)
}

// access is the environment that tells the bootstrap how to reach the
// cluster: a kubeconfig in local mode; in EKS mode none, but the role's
// credentials (set after the fake's own, so they win).
func (f Function) access(fake *awsfake.Server) ([]string, error) {
	if f.EKS == nil {
		return []string{"DRAINPIPE_KUBECONFIG=" + f.Kubeconfig}, nil
	}
	if f.Cluster != f.EKS.Name {
		return nil, fmt.Errorf("function handles cluster %q but the EKS cluster is %q", f.Cluster, f.EKS.Name)
	}
	RegisterEKS(fake, *f.EKS)
	return f.EKS.Function.Env(), nil
}
