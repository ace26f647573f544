package fleet

import (
	"errors"
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
	// CordonConcurrency is the cordon queue's mapping's maximum
	// concurrency: default 20, as the stack sets it; negative, no cordon
	// queue (the rules target the work queue alone).
	CordonConcurrency int
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
	if f.CordonConcurrency == 0 {
		f.CordonConcurrency = 20
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
// source mappings.
type Deployment struct {
	Function
	Queue, DLQ string
	Mapping    *esm.Mapping
	// CordonQueue and CordonMapping are the cordon queue's; empty and nil
	// without one.
	CordonQueue   string
	CordonMapping *esm.Mapping
}

// Queues are the queues the rules target: the work queue, then the
// cordon queue when there is one.
func (d *Deployment) Queues() []string {
	if d.CordonQueue == "" {
		return []string{d.Queue}
	}
	return []string{d.Queue, d.CordonQueue}
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
	var cordon string
	if fn.CordonConcurrency > 0 {
		// As the stack makes it: a copy that failed twice goes to the
		// dead-letter queue.
		if cordon, err = fake.CreateQueue(Account, CordonQueueName, awsfake.QueueOptions{VisibilityTimeout: fn.Visibility,
			MaxReceiveCount: 2, DeadLetterURL: dlq, Duplicates: fn.Duplicates}); err != nil {
			return nil, err
		}
		env = append(env, "DRAINPIPE_CORDON_QUEUE_ARN="+CordonQueueARN)
	}
	env = append(append(env, access...), fn.Env...)
	o := esm.Options{
		Fake: fake, QueueURL: queue, QueueARN: QueueARN,
		BatchSize: fn.BatchSize, BatchWindow: fn.BatchWindow, MaxConcurrency: fn.MaxConcurrency, Timeout: fn.Timeout,
		Bootstrap: fn.Bootstrap, Func: fn.Func, Env: env, FunctionName: "drainpipe", Region: awsfake.Region, Stdout: fn.Stdout,
	}
	m, err := esm.Start(o)
	if err != nil {
		return nil, fmt.Errorf("starting the event source mapping: %w", err)
	}
	d := &Deployment{Function: fn, Queue: queue, DLQ: dlq, Mapping: m}
	if cordon != "" {
		o.QueueURL, o.QueueARN, o.BatchSize, o.BatchWindow, o.MaxConcurrency = cordon, CordonQueueARN, 10, 0, fn.CordonConcurrency
		if d.CordonMapping, err = esm.Start(o); err != nil {
			_ = m.Stop()
			return nil, fmt.Errorf("starting the cordon queue's event source mapping: %w", err)
		}
		d.CordonQueue = cordon
	}
	return d, nil
}

// Stop stops the mappings and their environments.
func (d *Deployment) Stop() error {
	err := d.Mapping.Stop()
	if d.CordonMapping != nil {
		err = errors.Join(err, d.CordonMapping.Stop())
	}
	return err
}
