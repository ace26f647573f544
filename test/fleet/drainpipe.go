package fleet

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/drainpipe/drainpipe/internal/config"
	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/esm"
	"github.com/drainpipe/drainpipe/test/sandbox"
)

// Function is how the wave's Drainpipe is deployed; zero fields get the
// stack's defaults.
type Function struct {
	Bootstrap       string
	Func            esm.Func      // run in process instead of Bootstrap (a benchmark's floor)
	Kubeconfig      string        // acting as DrainpipeUser (Identity.WriteKubeconfig)
	Cluster         string        // DRAINPIPE_CLUSTERS; the fleet's Spec.Cluster
	BatchSize       int           // default 10
	BatchWindow     time.Duration // default 0
	MaxConcurrency  int           // default 10
	Timeout         time.Duration // default 300 s
	MaxReceiveCount int           // default 5
	// Visibility is the queue's visibility timeout; default 6 × Timeout,
	// as the stack sets it (Lambda requires at least Timeout).
	Visibility time.Duration
	// Duplicates delivers every message that many times (SQS standard
	// queues are at-least-once); 0 or 1: once.
	Duplicates int
	Env        []string  // more DRAINPIPE_* settings, applied last
	Stdout     io.Writer // every environment's output; nil keeps it in memory only

	// EKS, when set, is EKS mode instead of Kubeconfig: Deploy registers
	// the cluster on the fake (RegisterEKS) and the bootstrap describes it
	// and signs tokens with the role's credentials, which the sandbox's
	// aws-iam-authenticator webhook checks (Options.EKSAuth, sb.EKS()).
	// Cluster must be its Name; set Endpoint to an EndpointProxy's URL to
	// recreate the cluster later.
	EKS *sandbox.EKSCluster
}

func (f Function) withDefaults() Function {
	if f.BatchSize == 0 {
		f.BatchSize = 10
	}
	if f.MaxConcurrency == 0 {
		f.MaxConcurrency = 10
	}
	if f.Timeout == 0 {
		f.Timeout = 300 * time.Second
	}
	if f.MaxReceiveCount == 0 {
		f.MaxReceiveCount = 5
	}
	if f.Visibility == 0 {
		f.Visibility = 6 * f.Timeout
	}
	return f
}

// Deployment is Drainpipe running on the fleet: its queues and its event
// source mapping.
type Deployment struct {
	Function
	Queue, DLQ string
	Mapping    *esm.Mapping
}

// Deploy creates the queues on fake and starts the mapping; Stop it.
func Deploy(fake *awsfake.Server, fn Function) (*Deployment, error) {
	fn = fn.withDefaults()
	access, err := fn.access(fake)
	if err != nil {
		return nil, err
	}
	queue, dlq, err := queuesWith(fake, awsfake.QueueOptions{
		VisibilityTimeout: fn.Visibility, MaxReceiveCount: fn.MaxReceiveCount, Duplicates: fn.Duplicates,
	})
	if err != nil {
		return nil, err
	}
	env := append([]string{
		"DRAINPIPE_CLUSTERS=" + fn.Cluster,
		"DRAINPIPE_MAX_RECEIVE_COUNT=" + strconv.Itoa(fn.MaxReceiveCount),
		"DRAINPIPE_MAX_CONCURRENCY=" + strconv.Itoa(fn.MaxConcurrency), // as the stack sets it
		"AWS_DEFAULT_REGION=" + awsfake.Region,
		"AWS_ENDPOINT_URL=" + fake.URL(),
	}, fake.Env()...) // endpoints, region and credentials: the fake verifies signatures
	for k, v := range config.RuntimeEnv() { // as the stack deploys it
		env = append(env, k+"="+v)
	}
	env = append(append(env, access...), fn.Env...)
	m, err := esm.Start(esm.Options{
		Fake: fake, QueueURL: queue, QueueARN: QueueARN,
		BatchSize: fn.BatchSize, BatchWindow: fn.BatchWindow, MaxConcurrency: fn.MaxConcurrency, Timeout: fn.Timeout,
		Bootstrap: fn.Bootstrap, Func: fn.Func, Env: env, FunctionName: "drainpipe", Region: awsfake.Region, Stdout: fn.Stdout,
	})
	if err != nil {
		return nil, fmt.Errorf("starting the event source mapping: %w", err)
	}
	return &Deployment{Function: fn, Queue: queue, DLQ: dlq, Mapping: m}, nil
}

// Stop stops the mapping and its environments.
func (d *Deployment) Stop() error { return d.Mapping.Stop() }
