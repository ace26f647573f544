package main

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awseks "github.com/aws/aws-sdk-go-v2/service/eks"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/eks"
	"github.com/drainpipe/drainpipe/internal/preflight"
	"github.com/drainpipe/drainpipe/internal/version"
)

const checkUsage = `usage: drainpipe check [--stack NAME | -c key=value ...] [--role-arn ARN] [--queue-arn ARN]
                       [--topic-arn ARN] [--others HOOK,...] [--kubeconfig PATH] [-o json]

Read-only pre-flight of a deployment, with your AWS credentials and region:
  - every Auto Scaling group of the served clusters (tagged for one, or
    named by asgNames/asgNamePrefix) with its terminate and launch hooks,
    and whether the stack's rules serve each, or why not;
  - per cluster: the function role's access entry, deploy/rbac.yaml
    (a SubjectAccessReview of group drainpipe per permission) and
    deploy/flowcontrol.yaml (its FlowSchemas and priority levels);
  - whether the alarm topic has a confirmed subscriber.

What the stack serves comes from --stack (its outputs and its function's
environment), from -c with the CDK context you deploy with (clusters,
asgNames, asgNamePrefix, lifecycleHookNames, requiredTag, alarmTopicArn),
or else from the DRAINPIPE_* variables. Clusters are reached through EKS,
or --kubeconfig (the context named after each cluster, else the current).

Exits 0 when every check passed, 1 when one found a gap or could not be
made (the report says why), 2 on bad arguments or configuration.

Flags:`

// checkTimeout bounds the whole check.
const checkTimeout = 3 * time.Minute

// arnPattern is any ARN, enough to catch a value in the wrong flag.
var arnPattern = regexp.MustCompile(`^arn:aws[a-z-]*:[a-z0-9-]+:[a-z0-9-]*:[0-9]{0,12}:.+$`)

// checkFlags are `drainpipe check`'s arguments.
type checkFlags struct {
	stack, roleARN, queueARN, topicARN, kubeconfig, output string
	context                                                []string
	others                                                 []string
	timeout                                                time.Duration
}

// repeated is a flag given several times (-c a=1 -c b=2).
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, " ") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

// parseCheck reads and validates the arguments, every problem at once.
func parseCheck(c cli, args []string) (checkFlags, int) {
	var f checkFlags
	var ctxPairs repeated
	fs := newFlags(c, "check", checkUsage)
	fs.StringVar(&f.stack, "stack", "", "the deployed stack's name (CloudFormation)")
	fs.Var(&ctxPairs, "c", "a CDK context value the stack would be deployed with, key=value (repeatable)")
	fs.StringVar(&f.roleARN, "role-arn", "", "the function's role (default: the stack's RoleArn output)")
	fs.StringVar(&f.queueARN, "queue-arn", "", "the stack's queue (default: its QueueArn output)")
	fs.StringVar(&f.topicARN, "topic-arn", "", "the alarm topic (default: the stack's AlarmTopicArn output)")
	others := fs.String("others", "", "hook names another tool answers, comma-separated: not gaps")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "reach the clusters through this kubeconfig instead of EKS")
	fs.StringVar(&f.output, "o", "", "output format: json (default a table)")
	fs.DurationVar(&f.timeout, "timeout", checkTimeout, "the check's deadline")
	rest, code := parseArgs(fs, args)
	if code >= 0 {
		return f, code
	}
	f.context = ctxPairs
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if len(rest) > 0 {
		bad("unexpected arguments %q", rest)
	}
	if f.stack != "" && len(f.context) > 0 {
		bad("--stack and -c: give one (the deployed stack, or the context you would deploy)")
	}
	for name, v := range map[string]string{"--role-arn": f.roleARN, "--queue-arn": f.queueARN, "--topic-arn": f.topicARN} {
		if v != "" && !arnPattern.MatchString(v) {
			bad("%s %q is not an ARN", name, v)
		}
	}
	if f.output != "" && f.output != "json" {
		bad("-o %q: want json", f.output)
	}
	if f.timeout <= 0 {
		bad("--timeout must be positive, got %s", f.timeout)
	}
	for _, h := range strings.Split(*others, ",") {
		if h = strings.TrimSpace(h); h != "" {
			f.others = append(f.others, h)
		}
	}
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintf(c.Stderr, "drainpipe check: %v\n", strings.ReplaceAll(err.Error(), "\n", "\ndrainpipe check: "))
		return f, exitUsage
	}
	return f, -1
}

// checkCmd is `drainpipe check`.
func checkCmd(ctx context.Context, c cli, args []string) int {
	f, code := parseCheck(c, args)
	if code >= 0 {
		return code
	}
	s, _ := start(c, "check", startSpec{})
	defer s.end()
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	// A context or DRAINPIPE_* variables are checked before connecting:
	// their mistakes need no credentials to be told.
	var rep preflight.Report
	var err error
	if f.stack == "" {
		if rep, err = resolveStack(ctx, c, f, aws.Config{}); err != nil {
			return s.fail(exitCode(err), err)
		}
	}
	if code := s.connect(ctx); code >= 0 {
		return code
	}
	if f.stack != "" {
		if rep, err = resolveStack(ctx, c, f, s.aws); err != nil {
			return s.fail(exitCode(err), err)
		}
	}
	gatherReport(ctx, &rep, f, s.aws)
	if err := printReport(c.Stdout, rep, f.output == "json"); err != nil {
		return s.failf(exitFail, "writing: %w", err)
	}
	if gaps, unknown := rep.Counts(); gaps+unknown > 0 {
		s.log.Warn("drainpipe check found what would fail", "gaps", gaps, "unknown", unknown)
		return exitFail
	}
	return exitOK
}

// resolveStack finds what the deployment serves: a bad context or
// configuration is a usageError (exit 2), a stack that cannot be read
// another error (exit 1).
func resolveStack(ctx context.Context, c cli, f checkFlags, awsCfg aws.Config) (preflight.Report, error) {
	var rep preflight.Report
	var err error
	switch {
	case f.stack != "":
		rep.Source = "stack " + f.stack
		if rep.Stack, err = deployedStack(ctx, awsCfg, f.stack); err != nil {
			return rep, err
		}
	case len(f.context) > 0:
		rep.Source = "context"
		env, topic, cerr := contextEnv(f.context)
		if cerr == nil {
			rep.Stack, cerr = stackFromEnv(func(k string) string { return env[k] })
		}
		if cerr != nil {
			return rep, usageError{cerr}
		}
		rep.Stack.TopicARN = topic
	default:
		rep.Source = "DRAINPIPE_* variables"
		if rep.Stack, err = stackFromEnv(c.Getenv); err != nil {
			return rep, usageError{err}
		}
	}
	override(&rep.Stack.RoleARN, f.roleARN)
	override(&rep.Stack.QueueARN, f.queueARN)
	override(&rep.Stack.TopicARN, f.topicARN)
	return rep, nil
}

// gatherReport reads the account and each cluster; what cannot be read
// becomes an unknown finding with its reason, and the rest goes on.
func gatherReport(ctx context.Context, rep *preflight.Report, f checkFlags, awsCfg aws.Config) {
	s := rep.Stack
	rep.Hooks = []preflight.HookRow{}
	if groups, err := listGroups(ctx, awsCfg, s); err != nil {
		rep.Checks = append(rep.Checks, preflight.Check{What: "lifecycle hooks", Status: preflight.Unknown, Detail: err.Error()})
	} else if rep.Hooks, err = preflight.JudgeHooks(s, groups, f.others); err != nil {
		rep.Checks = append(rep.Checks, preflight.Check{What: "lifecycle hooks", Status: preflight.Unknown, Detail: err.Error()})
	}
	// The policies and the other manifests must be the deployed function's
	// version; without the stack's, this command's.
	want, wantOf := baseVersion(s.Version), "the function"
	if want == "" {
		want, wantOf = baseVersion(version.Get().Version), "this drainpipe"
	}
	eksClient := awseks.NewFromConfig(awsCfg)
	clients := kubeClients(awsCfg, f.kubeconfig)
	for _, cluster := range s.Clusters {
		entry, username := accessEntry(ctx, eksClient, cluster, s.RoleARN)
		rep.Checks = append(rep.Checks, entry)
		k, err := clients(ctx, cluster)
		if err != nil {
			for _, what := range []string{"rbac", "flowcontrol", "admission policies", "versions"} {
				rep.Checks = append(rep.Checks, preflight.Check{Cluster: cluster, What: what, Status: preflight.Unknown,
					Detail: fmt.Sprintf("reaching the cluster: %v", err)})
			}
			continue
		}
		rep.Checks = append(rep.Checks, rbacCheck(ctx, k, cluster, username), flowControlCheck(ctx, k, cluster),
			admissionCheck(ctx, k, cluster, want, wantOf), versionsCheck(ctx, k, cluster, want, wantOf))
	}
	rep.Checks = append(rep.Checks, alarmTopic(ctx, awsCfg, s.TopicARN))
}

// kubeClients returns how to reach a cluster: its kubeconfig context, or
// EKS with the operator's credentials as the function does with its own.
func kubeClients(awsCfg aws.Config, kubeconfig string) func(context.Context, string) (kubernetes.Interface, error) {
	if kubeconfig == "" {
		return eks.New(awsCfg, eks.Options{}).Client
	}
	local, err := eks.NewLocal(kubeconfig, 0, 0)
	if err != nil {
		return func(context.Context, string) (kubernetes.Interface, error) { return nil, err }
	}
	return local.Client
}

// baseVersion is v without its development suffix (0.1.0-dev+abc: 0.1.0;
// 0.2.0-rc.1.dev+abc: 0.2.0-rc.1): a development build's stack tag and
// command are of the release they lead up to.
func baseVersion(v string) string {
	v, _, _ = strings.Cut(v, "+")
	return strings.TrimSuffix(strings.TrimSuffix(v, "-dev"), ".dev")
}

// override sets *dst to v when the flag was given.
func override(dst *string, v string) {
	if v != "" {
		*dst = v
	}
}
