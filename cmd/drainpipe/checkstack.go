package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/drainpipe/drainpipe/internal/config"
	"github.com/drainpipe/drainpipe/internal/preflight"
)

// contextKeys are the CDK context keys `check -c` reads, as the stack
// reads them (infra/stack/context.go), and the function setting each
// becomes; the ARN keys are the stack's outputs' stand-ins.
var contextKeys = map[string]string{
	"clusters":           config.Prefix + "CLUSTERS",
	"asgNames":           config.Prefix + "ASG_NAMES",
	"asgNamePrefix":      config.Prefix + "ASG_NAME_PREFIX",
	"lifecycleHookNames": config.Prefix + "LIFECYCLE_HOOK_NAMES",
	"requiredTag":        config.Prefix + "REQUIRED_TAG",
	"alarmTopicArn":      "",
}

// stackHookNames is the stack's lifecycleHookNames default.
const stackHookNames = "drainpipe,drainpipe-launch"

// contextEnv turns `-c key=value` pairs into the environment the stack
// would give the function, every problem at once. A list may be
// comma-separated or a JSON array, as CDK context values are.
func contextEnv(pairs []string) (env map[string]string, topic string, err error) {
	env = map[string]string{}
	var errs []error
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		name, known := contextKeys[k]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("-c %q: want key=value", p))
			continue
		case !known:
			errs = append(errs, fmt.Errorf("-c %s: check reads only %s", k, strings.Join(sortedKeys(contextKeys), ", ")))
			continue
		}
		if strings.HasPrefix(v, "[") {
			var list []string
			if json.Unmarshal([]byte(v), &list) != nil {
				errs = append(errs, fmt.Errorf("-c %s: %q is not a JSON array of strings", k, v))
				continue
			}
			v = strings.Join(list, ",")
		}
		if k == "alarmTopicArn" {
			topic = v
			continue
		}
		env[name] = v
	}
	// The stack passes hook names only when it serves groups, and then
	// its default unless told otherwise (infra/stack/hooknames.go).
	served := env[contextKeys["asgNames"]] != "" || env[contextKeys["asgNamePrefix"]] != ""
	if _, set := env[contextKeys["lifecycleHookNames"]]; served && !set {
		env[contextKeys["lifecycleHookNames"]] = stackHookNames
	} else if !served {
		delete(env, contextKeys["lifecycleHookNames"])
	}
	return env, topic, errors.Join(errs...)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// stackFromEnv reads what a function with this environment serves, as
// the function itself reads it (config.Load).
func stackFromEnv(getenv func(string) string) (preflight.Stack, error) {
	cfg, err := config.Load(getenv)
	if err != nil {
		return preflight.Stack{}, err
	}
	if len(cfg.Clusters) == 0 {
		return preflight.Stack{}, errors.New("no cluster: DRAINPIPE_CLUSTERS (or -c clusters=...) names none")
	}
	s := preflight.Stack{Clusters: cfg.Clusters, ASGNames: cfg.Hooks.ASGNames, ASGNamePrefix: cfg.Hooks.ASGNamePrefix,
		HookNames: cfg.Hooks.HookNames, RequiredTag: cfg.RequiredTag.Key}
	if !cfg.RequiredTag.AnyValue && cfg.RequiredTag.Key != "" {
		s.RequiredTag += "=" + cfg.RequiredTag.Value
	}
	return s, nil
}

// deployedStack reads a deployed stack: its outputs (CloudFormation) and
// its function's environment (Lambda), which says what it serves.
func deployedStack(ctx context.Context, cfg aws.Config, name string) (preflight.Stack, error) {
	out, err := cloudformation.NewFromConfig(cfg).DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: aws.String(name)})
	if err != nil {
		return preflight.Stack{}, fmt.Errorf("reading stack %s: %w", name, err)
	}
	if len(out.Stacks) != 1 {
		return preflight.Stack{}, fmt.Errorf("reading stack %s: CloudFormation returned %d stacks", name, len(out.Stacks))
	}
	outputs := map[string]string{}
	for _, o := range out.Stacks[0].Outputs {
		outputs[aws.ToString(o.OutputKey)] = aws.ToString(o.OutputValue)
	}
	fn := outputs["FunctionName"]
	if fn == "" {
		return preflight.Stack{}, fmt.Errorf("stack %s has no FunctionName output: is it a Drainpipe stack?", name)
	}
	conf, err := lambda.NewFromConfig(cfg).GetFunctionConfiguration(ctx, &lambda.GetFunctionConfigurationInput{FunctionName: aws.String(fn)})
	if err != nil {
		return preflight.Stack{}, fmt.Errorf("reading function %s of stack %s: %w", fn, name, err)
	}
	var env map[string]string
	if conf.Environment != nil {
		env = conf.Environment.Variables
	}
	s, err := stackFromEnv(func(k string) string { return env[k] })
	if err != nil {
		return preflight.Stack{}, fmt.Errorf("function %s's configuration: %w", fn, err)
	}
	s.QueueARN, s.RoleARN, s.TopicARN = outputs["QueueArn"], outputs["RoleArn"], outputs["AlarmTopicArn"]
	for _, tag := range out.Stacks[0].Tags {
		if aws.ToString(tag.Key) == "drainpipe:version" { // infra/stack.VersionTag
			s.Version = aws.ToString(tag.Value)
		}
	}
	return s, nil
}
