package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/config"
	"github.com/drainpipe/drainpipe/internal/eks"
)

// nodeTimeout bounds the API calls of `nodes` and `uncordon`.
const nodeTimeout = time.Minute

// client returns the client of the chosen cluster; without --kubeconfig it
// uses $KUBECONFIG's first file or ~/.kube/config. An unknown --context is
// an error, as with kubectl: acting on the current context instead could
// uncordon nodes of the wrong cluster.
func (k kubeFlags) client(ctx context.Context, c cli) (kubernetes.Interface, error) {
	path := *k.kubeconfig
	if path == "" {
		path, _, _ = strings.Cut(c.Getenv("KUBECONFIG"), string(os.PathListSeparator))
	}
	if path == "" {
		if home, err := os.UserHomeDir(); err == nil {
			path = filepath.Join(home, ".kube", "config")
		}
	}
	local, err := eks.NewLocal(path, 0, 0)
	if err != nil {
		return nil, err
	}
	if *k.context != "" && !local.HasContext(*k.context) {
		return nil, fmt.Errorf("context %q not found in kubeconfig %s", *k.context, path)
	}
	return local.Client(ctx, *k.context)
}

// withKubeconfig is getenv with DRAINPIPE_KUBECONFIG set to path (local
// mode) when path is given: --kubeconfig overrides the variable.
func withKubeconfig(getenv func(string) string, path string) func(string) string {
	if path == "" {
		return getenv
	}
	return func(k string) string {
		if k == config.Prefix+"KUBECONFIG" {
			return path
		}
		return getenv(k)
	}
}
