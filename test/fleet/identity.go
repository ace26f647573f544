package fleet

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Identity is who a client acts as. The sandbox's admin certificate
// impersonates it, so RBAC and API Priority and Fairness see an ordinary
// user, not system:masters (whose requests APF exempts).
type Identity struct {
	User   string
	Groups []string
}

var (
	// DrainpipeUser is how EKS maps the function's role: a user in group
	// drainpipe (deploy/rbac.yaml), served by APF's global-default level.
	DrainpipeUser = Identity{User: "drainpipe", Groups: []string{"drainpipe"}}
	// NTHUser is aws-node-termination-handler's in-cluster service
	// account, served by APF's workload-low level.
	NTHUser = Identity{
		User:   "system:serviceaccount:kube-system:aws-node-termination-handler",
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:kube-system"},
	}
)

// Config returns base acting as id.
func (id Identity) Config(base *rest.Config) *rest.Config {
	c := rest.CopyConfig(base)
	c.Impersonate = rest.ImpersonationConfig{UserName: id.User, Groups: id.Groups}
	return c
}

// WriteKubeconfig writes a copy of the kubeconfig at src acting as id into
// dir and returns its path (for the bootstrap's DRAINPIPE_KUBECONFIG).
func (id Identity) WriteKubeconfig(src, dir string) (string, error) {
	cfg, err := clientcmd.LoadFromFile(src)
	if err != nil {
		return "", fmt.Errorf("loading %s: %w", src, err)
	}
	for _, a := range cfg.AuthInfos {
		a.Impersonate, a.ImpersonateGroups = id.User, id.Groups
	}
	path := filepath.Join(dir, "drainpipe.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	return path, nil
}

// ApplyRBAC applies deploy/rbac.yaml (the ClusterRole and its binding to
// group drainpipe) and binds the same role to the NTH service account,
// whose own role grants at least as much.
func ApplyRBAC(ctx context.Context, c kubernetes.Interface, rbacYAML string) error {
	data, err := os.ReadFile(rbacYAML)
	if err != nil {
		return fmt.Errorf("reading %s: %w", rbacYAML, err)
	}
	var role rbacv1.ClusterRole
	var binding rbacv1.ClusterRoleBinding
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	if err := dec.Decode(&role); err != nil || role.Kind != "ClusterRole" {
		return fmt.Errorf("reading the ClusterRole of %s (kind %q): %v", rbacYAML, role.Kind, err)
	}
	if err := dec.Decode(&binding); err != nil || binding.Kind != "ClusterRoleBinding" {
		return fmt.Errorf("reading the ClusterRoleBinding of %s (kind %q): %v", rbacYAML, binding.Kind, err)
	}
	nth := binding.DeepCopy()
	nth.Name = "aws-node-termination-handler"
	nth.Subjects = []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "aws-node-termination-handler", Namespace: "kube-system"}}
	if _, err := c.RbacV1().ClusterRoles().Create(ctx, &role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating ClusterRole %s: %w", role.Name, err)
	}
	for _, b := range []*rbacv1.ClusterRoleBinding{&binding, nth} {
		if _, err := c.RbacV1().ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating ClusterRoleBinding %s: %w", b.Name, err)
		}
	}
	return nil
}
