package main

import (
	"context"
	"encoding/json"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/drainpipe/drainpipe/internal/live"
)

// defaultRunTimeout is the simulated invocation's deadline: the function's
// own timeout is in minutes too.
const defaultRunTimeout = 5 * time.Minute

const runUsage = `usage: drainpipe run [--kubeconfig PATH] [--context NAME] [--dry-run] [--timeout 5m] [FILE|-]

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
some is, 2 on bad arguments, configuration (no AWS credentials or region
included) or input, 1 on other failures.

Without AWS access, use 'drainpipe explain' to see what would be done.

Flags:`

// runEvent is `drainpipe run`: one simulated invocation.
func runEvent(ctx context.Context, c cli, args []string) int {
	fs := newFlags(c, "run", runUsage)
	local := addLocalFlags(fs)
	dryRun := addDryRun(fs, "look the instances up and find their nodes, but write nothing")
	timeout := addTimeout(fs, defaultRunTimeout, "the invocation's deadline")
	inputs, code := parseArgs(fs, args)
	if code >= 0 {
		return code
	}
	var bad problems
	bad.add(len(inputs) > 1, "one input at most, got %d", len(inputs))
	bad.timeout(*timeout)
	if code := bad.report(c, "run"); code >= 0 {
		return code
	}
	if len(inputs) == 0 {
		inputs = []string{"-"}
	}
	s, code := start(c, "run", startSpec{config: true, local: local, clusters: true})
	defer s.end()
	if code >= 0 {
		return code
	}
	data, err := readInput(inputs[0], c.Stdin)
	if err != nil {
		return s.fail(exitUsage, err)
	}
	batch := events.SQSEvent{Records: sqsMessages(data, time.Now())}

	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	if code := s.connect(ctx); code >= 0 {
		return code
	}
	acts, err := s.actors(*dryRun)
	if err != nil {
		return s.fail(exitUsage, err)
	}
	// The records are synthetic: there is no queue to hasten them back.
	h := live.NewHandler(s.cfg, acts.Pipeline, acts.Sweep, s.log, s.metrics, nil)
	s.log.Info("running", "dry_run", s.cfg.DryRun || *dryRun, "kubeconfig", s.cfg.Kubeconfig,
		"clusters", s.cfg.Clusters, "region", s.aws.Region, "records", len(batch.Records), "timeout", timeout.String())
	resp, err := h.Handle(ctx, batch)
	if err != nil { // Handle never fails today; it would retry the whole batch
		return s.failf(exitFail, "handling the batch: %w", err)
	}
	if resp.BatchItemFailures == nil {
		resp.BatchItemFailures = []events.SQSBatchItemFailure{}
	}
	out := json.NewEncoder(c.Stdout)
	out.SetEscapeHTML(false)
	if err := out.Encode(resp); err != nil {
		return s.failf(exitFail, "writing: %w", err)
	}
	if len(resp.BatchItemFailures) > 0 {
		return exitRetry
	}
	return exitOK
}
