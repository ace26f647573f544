package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"k8s.io/klog/v2"

	"github.com/drainpipe/drainpipe/internal/config"
	"github.com/drainpipe/drainpipe/internal/live"
	"github.com/drainpipe/drainpipe/internal/metrics"
)

// defaultRunTimeout is the simulated invocation's deadline: the function's
// own timeout is in minutes too.
const defaultRunTimeout = 5 * time.Minute

const runUsage = `usage: drainpipe run [--kubeconfig PATH] [--dry-run] [--timeout 5m] [FILE|-]

Handles one Lambda SQS event ({"Records":[...]}), 'aws sqs receive-message'
output or message bodies (standard input when no FILE) exactly as the function does: the same handler,
the same live actor. Kubernetes is the cluster of --kubeconfig (local mode,
overriding DRAINPIPE_KUBECONFIG) or, without one, EKS as in Lambda. EC2 and
Auto Scaling are called with your AWS credentials and region (AWS_ENDPOINT_URL_*
honoured). Every other setting comes from the DRAINPIPE_* variables;
DRAINPIPE_CLUSTERS must name the cluster the instances are tagged for.

Prints the SQSEventResponse JSON on standard output and the JSON logs on
standard error (JSON lines only; EMF metrics among them unless
DRAINPIPE_METRICS=false). Exits 0 when no record is left to retry, 3 when
some is, 2 on bad arguments, configuration or input, 1 on other failures.

Without AWS access, use 'drainpipe explain' to see what would be done.

Flags:`

// runEvent is `drainpipe run`: one simulated invocation.
func runEvent(ctx context.Context, c cli, args []string) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(c.Stderr)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig of the cluster to act on (local mode)")
	dryRun := fs.Bool("dry-run", false, "look the instances up and find their nodes, but write nothing")
	timeout := fs.Duration("timeout", defaultRunTimeout, "the invocation's deadline")
	fs.Usage = func() {
		fmt.Fprintln(c.Stderr, runUsage)
		fs.PrintDefaults()
	}
	inputs, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		return exitUsage
	}
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(c.Stderr, "drainpipe run: "+format+"\n", a...)
		return code
	}
	switch {
	case len(inputs) > 1:
		return fail(exitUsage, "one input at most, got %d", len(inputs))
	case *timeout <= 0:
		return fail(exitUsage, "--timeout must be positive, got %s", *timeout)
	case len(inputs) == 0:
		inputs = []string{"-"}
	}

	getenv := withKubeconfig(c.Getenv, *kubeconfig)
	cfg, err := config.Load(getenv)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	if len(cfg.Clusters) == 0 {
		return fail(exitUsage, "DRAINPIPE_CLUSTERS is not set: every instance would be ignored")
	}
	data, err := readInput(inputs[0], c.Stdin)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	batch := events.SQSEvent{Records: sqsMessages(data, time.Now())}

	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	awsCfg, err := regionalAWSConfig(ctx)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	log := slog.New(slog.NewJSONHandler(c.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	// client-go's and the AWS SDK's own messages join the JSON logs, so
	// standard error is JSON lines only.
	klog.SetSlogLogger(log)
	awsCfg.Logger = live.SDKLogger(log)
	// EMF metric lines go to stderr with the logs, keeping stdout for the
	// response alone; DRAINPIPE_METRICS=false silences them as in Lambda.
	var metricsOut io.Writer = io.Discard
	if cfg.Metrics {
		metricsOut = c.Stderr
	}
	emf := metrics.New(metricsOut).WithStack(cfg.MetricsStack)
	acts, err := live.NewActors(cfg, awsCfg, log, live.Options{DryRun: *dryRun, Metrics: emf})
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	// The records are synthetic: there is no queue to hasten them back.
	h := live.NewHandler(cfg, acts.Pipeline, acts.Sweep, log, emf, nil)
	log.Info("running", "dry_run", cfg.DryRun || *dryRun, "kubeconfig", cfg.Kubeconfig,
		"clusters", cfg.Clusters, "region", awsCfg.Region, "records", len(batch.Records), "timeout", timeout.String())
	resp, err := h.Handle(ctx, batch)
	if err != nil { // Handle never fails today; it would retry the whole batch
		return fail(exitFail, "handling the batch: %v", err)
	}
	if resp.BatchItemFailures == nil {
		resp.BatchItemFailures = []events.SQSBatchItemFailure{}
	}
	out := json.NewEncoder(c.Stdout)
	out.SetEscapeHTML(false)
	if err := out.Encode(resp); err != nil {
		return fail(exitFail, "writing: %v", err)
	}
	if len(resp.BatchItemFailures) > 0 {
		return exitRetry
	}
	return exitOK
}
