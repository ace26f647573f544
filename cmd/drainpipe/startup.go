package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/aws"
	"k8s.io/klog/v2"

	"github.com/drainpipe/drainpipe/internal/config"
	"github.com/drainpipe/drainpipe/internal/eks"
	"github.com/drainpipe/drainpipe/internal/live"
	"github.com/drainpipe/drainpipe/internal/metrics"
)

// startSpec says what a command needs of the start-up besides its logger.
type startSpec struct {
	config   bool      // the DRAINPIPE_* settings, validated
	local    kubeFlags // --kubeconfig (local mode, over DRAINPIPE_KUBECONFIG) and --context, when the command takes them
	clusters bool      // DRAINPIPE_CLUSTERS must name a cluster
}

// session is a started command: its settings, its logger (the only writer
// of standard error from here on, JSON lines), its metrics and, once
// connected, its AWS configuration.
type session struct {
	name        string
	cfg         config.Config
	log         *slog.Logger
	metrics     *metrics.Emitter
	aws         aws.Config
	kubeContext string
}

// start is every command's start-up, in the order the function's own is:
// the logger first (client-go's klog routed into it), so that even a
// configuration error is a JSON line; then the settings, which set its
// level; then the metrics, on standard error beside the logs and nowhere
// when DRAINPIPE_METRICS=false. A problem is logged and its exit code
// returned (-1 to go on). Call end when done.
func start(c cli, name string, spec startSpec) (*session, int) {
	level := new(slog.LevelVar)
	s := &session{name: name, metrics: metrics.New(io.Discard),
		log: slog.New(slog.NewJSONHandler(c.Stderr, &slog.HandlerOptions{Level: level}))}
	klog.SetSlogLogger(s.log)
	if !spec.config {
		return s, -1
	}
	getenv := c.Getenv
	if spec.local.kubeconfig != nil {
		getenv = withKubeconfig(getenv, *spec.local.kubeconfig)
		s.kubeContext = *spec.local.context
	}
	cfg, err := config.Load(getenv)
	if err != nil {
		return s, s.fail(exitUsage, err)
	}
	s.cfg = cfg
	level.Set(cfg.LogLevel)
	if cfg.Metrics {
		s.metrics = metrics.New(c.Stderr)
	}
	s.metrics = s.metrics.WithStack(cfg.MetricsStack)
	var problems []error
	if spec.clusters && len(cfg.Clusters) == 0 {
		problems = append(problems, errors.New("DRAINPIPE_CLUSTERS is not set: every instance would be ignored"))
	}
	if err := s.checkContext(); err != nil {
		problems = append(problems, err)
	}
	if err := errors.Join(problems...); err != nil {
		return s, s.fail(exitUsage, err)
	}
	return s, -1
}

// checkContext refuses a --context the kubeconfig lacks, before anything
// is done: the current context could be another cluster.
func (s *session) checkContext() error {
	if s.kubeContext == "" {
		return nil
	}
	if s.cfg.Kubeconfig == "" {
		return errors.New("--context needs --kubeconfig (or DRAINPIPE_KUBECONFIG): without one the clusters are EKS's")
	}
	local, err := eks.NewLocal(s.cfg.Kubeconfig, 0, 0)
	if err != nil {
		return err
	}
	return local.UseContext(s.kubeContext)
}

// connect loads the AWS configuration of the operator's credentials, the
// SDK's own lines routed into the logger. No region or no credentials is
// a configuration problem, said now: found on the first call, it would
// fail every record as if to be retried.
func (s *session) connect(ctx context.Context) int {
	cfg, err := live.AWSConfig(ctx, live.WithSDKLog(s.log))
	if err == nil && cfg.Region == "" {
		err = errors.New("no AWS region: set AWS_REGION or a profile's region")
	}
	if err == nil && cfg.Credentials == nil {
		err = errors.New("no AWS credentials")
	}
	if err == nil {
		if _, cerr := cfg.Credentials.Retrieve(ctx); cerr != nil {
			err = fmt.Errorf("no AWS credentials: %w", cerr)
		}
	}
	if err != nil {
		return s.fail(exitUsage, err)
	}
	s.aws = cfg
	return -1
}

// actors builds the live actor and the sweep on it, as the function does,
// with the command's metrics and --context.
func (s *session) actors(dryRun bool) (live.Actors, error) {
	return live.NewActors(s.cfg, s.aws, s.log, live.Options{DryRun: dryRun, Metrics: s.metrics, KubeContext: s.kubeContext})
}

// fail logs err, as the plain line `drainpipe NAME: err` would say it, and
// returns code.
func (s *session) fail(code int, err error) int {
	s.log.Error("drainpipe "+s.name+": "+err.Error(), "exit", code)
	return code
}

// failf is fail with a message made of format.
func (s *session) failf(code int, format string, a ...any) int {
	return s.fail(code, fmt.Errorf(format, a...))
}

// end hands klog back: a command run as a function (tests) must not leave
// its logger behind.
func (s *session) end() { klog.ClearLogger() }

// exitCode is exitUsage for a usageError (bad arguments or input found
// along the way), else exitFail.
func exitCode(err error) int {
	var usage usageError
	if errors.As(err, &usage) {
		return exitUsage
	}
	return exitFail
}
