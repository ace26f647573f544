package eks

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/drainpipe/drainpipe/internal/kubewire"
)

// Local hands out clients built from a kubeconfig file, for local mode.
// A cluster name picks the kubeconfig context of that name when there is
// one, and the current context otherwise, so one kubeconfig can serve
// several clusters or a single local one under any name.
type Local struct {
	config *clientcmdapi.Config
	qps    float32
	burst  int
	// context, when set, serves every cluster: the command-line tool's
	// --context, which names the cluster to act on whatever it is called.
	context string

	mu      sync.Mutex
	clients map[string]kubernetes.Interface
}

// NewLocal loads the kubeconfig at path. qps and burst default to
// DefaultQPS and DefaultBurst when 0.
func NewLocal(path string, qps float32, burst int) (*Local, error) {
	if path == "" {
		return nil, errors.New("loading kubeconfig: empty path")
	}
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig %s: %w", path, err)
	}
	if qps == 0 {
		qps = DefaultQPS
	}
	if burst == 0 {
		burst = DefaultBurst
	}
	return &Local{config: cfg, qps: qps, burst: burst, clients: map[string]kubernetes.Interface{}}, nil
}

// HasContext reports whether the kubeconfig has a context of that name;
// the command-line tool refuses an unknown --context, as kubectl does,
// where Client would quietly use the current one.
func (l *Local) HasContext(name string) bool {
	_, ok := l.config.Contexts[name]
	return ok
}

// UseContext makes every cluster's client use the kubeconfig context name;
// an unknown one is an error, as with kubectl.
func (l *Local) UseContext(name string) error {
	if !l.HasContext(name) {
		return fmt.Errorf("context %q not found in kubeconfig", name)
	}
	l.context = name
	return nil
}

// Client returns the clientset for cluster (see Local for how the context
// is chosen), building it on first use.
func (l *Local) Client(_ context.Context, cluster string) (kubernetes.Interface, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c, ok := l.clients[cluster]; ok {
		return c, nil
	}
	overrides := &clientcmd.ConfigOverrides{}
	if _, ok := l.config.Contexts[cluster]; ok && cluster != "" {
		overrides.CurrentContext = cluster
	}
	if l.context != "" {
		overrides.CurrentContext = l.context
	}
	rc, err := clientcmd.NewDefaultClientConfig(*l.config, overrides).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("building rest config for cluster %s: %w", cluster, err)
	}
	kubewire.Tune(rc, l.qps, l.burst)
	c, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("building kubernetes client for cluster %s: %w", cluster, err)
	}
	l.clients[cluster] = c
	return c, nil
}
