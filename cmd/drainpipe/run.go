package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/drainpipe/drainpipe/internal/config"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/live"
)

// defaultRunTimeout is the simulated invocation's deadline: the function's
// own timeout is in minutes too.
const defaultRunTimeout = 5 * time.Minute

const runUsage = `usage: drainpipe run [--kubeconfig PATH] [--context NAME] [--dry-run] [--yes] [--function-arn ARN] [--timeout 5m] [FILE|-]

Handles one Lambda SQS event ({"Records":[...]}), 'aws sqs receive-message'
output or message bodies (standard input when no FILE) exactly as the function does: the same handler,
the same live actor. Kubernetes is the cluster of --kubeconfig (local mode,
overriding DRAINPIPE_KUBECONFIG) or, without one, EKS as in Lambda. EC2 and
Auto Scaling are called with your AWS credentials and region (AWS_ENDPOINT_URL_*
honoured). Every other setting comes from the DRAINPIPE_* variables;
DRAINPIPE_CLUSTERS must name the cluster the instances are tagged for.

Events are held to the function's account and region as the function holds
them: those of --function-arn (partition too), or, without it, the region of
your AWS configuration only. Without --dry-run it first says what it would
write and asks (standard input a terminal and not the input), or needs --yes;
not confirmed, nothing is done (exit 2).

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
	yes := addYes(fs, "write without asking")
	arn := fs.String("function-arn", "", "the function's ARN: hold events to its partition, account and region (default: the AWS configuration's region)")
	inputs, code := parseArgs(fs, args)
	if code >= 0 {
		return code
	}
	var bad problems
	bad.add(len(inputs) > 1, "one input at most, got %d", len(inputs))
	bad.timeout(*timeout)
	if *arn != "" {
		_, err := event.OriginFromFunctionARN(*arn)
		bad.add(err != nil, "--function-arn: %v", err)
	}
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
	if inputs[0] == "-" {
		c.Terminal = false // the input took standard input: no answer left to read there
	}
	if !*dryRun && !s.cfg.DryRun && !confirmed(c, "run", runPlan(s.cfg, len(batch.Records), *arn), "; --dry-run looks up without writing", *yes) {
		return exitUsage
	}

	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	if code := s.connect(ctx); code >= 0 {
		return code
	}
	if *arn != "" {
		ctx = lambdacontext.NewContext(ctx, &lambdacontext.LambdaContext{InvokedFunctionArn: *arn})
	} else {
		ctx = handler.WithOrigin(ctx, event.Origin{Region: s.aws.Region})
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

// runPlan says what a run writes, for its confirmation.
func runPlan(cfg config.Config, records int, arn string) string {
	origin := "of the AWS configuration's region (any account: --function-arn holds them to the function's)"
	if arn != "" {
		origin = "of function " + arn + "'s account and region"
	}
	return fmt.Sprintf("handle %d record(s) as the function does: for events %s, cordon, taint and drain the nodes "+
		"of the instances they name in %s, and complete their lifecycle actions.", records, origin, clusterWhere(cfg))
}
