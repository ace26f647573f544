// Package drain cordons, taints and drains Kubernetes nodes. It is the only
// package that touches pods.
package drain

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"k8s.io/client-go/kubernetes"
)

// Request asks for one node to be cordoned and, when Evict is set, drained.
type Request struct {
	Node    string
	Kind    string // interruption kind: the taint's value and an annotation
	EventID string
	// Deadline is when the instance disappears; zero when unknown. Grace
	// periods are clamped so pods finish before it.
	Deadline time.Time
	Evict    bool
}

// Skipped is a pod left alone, with why.
type Skipped struct {
	Pod    string `json:"pod"`
	Reason string `json:"reason"`
}

// Report says what a Run did. Pods are named namespace/name.
type Report struct {
	Node         string
	Evicted      []string
	BlockedByPDB []string
	Terminating  []string // evicted but not yet gone when Run stopped
	Skipped      []Skipped
	Elapsed      time.Duration
	// Done is true when the node is cordoned and, for an evicting request,
	// no pod is left to evict or to wait for.
	Done bool
}

// Config tunes the drainer.
type Config struct {
	Concurrency    int
	TaintEffect    string
	ExcludeFromLB  bool
	EvictUnmanaged bool
	SafetyMargin   time.Duration
}

// Drainer drains nodes of one cluster.
type Drainer struct {
	client kubernetes.Interface
	cfg    Config
	log    *slog.Logger
}

// New returns a Drainer using client.
func New(client kubernetes.Interface, cfg Config, log *slog.Logger) *Drainer {
	return &Drainer{client: client, cfg: cfg, log: log}
}

// Run cordons the node and, for an evicting request, evicts its pods and
// waits for them to go. It stops when ctx ends, returning a report with
// Done false (not an error): the caller resumes by calling Run again.
func (d *Drainer) Run(ctx context.Context, req Request) (Report, error) {
	return Report{}, errors.New("drain: not implemented yet")
}
