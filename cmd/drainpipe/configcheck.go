package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/drainpipe/drainpipe/internal/config"
)

const configUsage = `usage: drainpipe config check [--function NAME] [FILE|-]

Checks a function's configuration as the function checks it when it
starts, and says every problem at once: a value it would refuse, and a
DRAINPIPE_ variable it does not know (a typo is otherwise ignored).

The configuration is the deployed function's environment (--function,
read with lambda:GetFunctionConfiguration), or a JSON file: the
environment's variables as an object ({"DRAINPIPE_CLUSTERS": "prod", …},
what 'aws lambda get-function-configuration --query Environment.Variables'
prints), or that command's whole answer. '-' reads standard input.

Exits 0 when the function would start with it, 2 when it would not or a
variable is unknown, 1 when the function cannot be read.

Flags:`

func configCmd(ctx context.Context, c cli, args []string) int {
	fs := newFlags(c, "config check", configUsage)
	fn := fs.String("function", "", "the deployed function's name or ARN")
	timeout := addTimeout(fs, 30*time.Second, "how long reading the function may take")
	if _, code := subcommand(fs, args, "check"); code >= 0 {
		return code
	}
	rest, code := parseArgs(fs, args[1:])
	if code >= 0 {
		return code
	}
	var bad problems
	bad.add(*fn == "" && len(rest) != 1, "give --function NAME or one FILE")
	bad.add(*fn != "" && len(rest) > 0, "--function and a FILE: give one")
	bad.add(len(rest) > 1, "one FILE, got %d", len(rest))
	if code := bad.report(c, "config check"); code >= 0 {
		return code
	}
	var env map[string]string
	var err error
	source := *fn
	if *fn != "" {
		env, err = functionEnv(ctx, c, *fn, *timeout)
		if err != nil {
			fmt.Fprintf(c.Stderr, "drainpipe config check: %v\n", err)
			return exitFail
		}
	} else {
		source = rest[0]
		if env, err = fileEnv(c, rest[0]); err != nil {
			fmt.Fprintf(c.Stderr, "drainpipe config check: %s: %v\n", rest[0], err)
			return exitUsage
		}
	}
	return reportConfig(c, source, env)
}

// reportConfig loads env as the function does and prints what is wrong,
// or what it says in brief.
func reportConfig(c cli, source string, env map[string]string) int {
	var issues []string
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			issues = append(issues, line)
		}
	}
	environ := make([]string, 0, len(env))
	for k, v := range env {
		environ = append(environ, k+"="+v)
	}
	for _, u := range config.UnknownNames(environ) {
		issues = append(issues, u.String())
	}
	if len(issues) > 0 {
		fmt.Fprintf(c.Stdout, "%s: the function would not start as meant (%d problems):\n", source, len(issues))
		for _, s := range issues {
			fmt.Fprintf(c.Stdout, "  %s\n", s)
		}
		return exitUsage
	}
	var set int
	for k := range env {
		if strings.HasPrefix(k, config.Prefix) {
			set++
		}
	}
	fmt.Fprintf(c.Stdout, "%s: valid (%d DRAINPIPE_ settings; dry run %v; clusters %s)\n", source, set, cfg.DryRun,
		strings.Join(cfg.Clusters, ","))
	return exitOK
}

// fileEnv reads a variables object, or a get-function-configuration
// answer, from path ('-': standard input).
func fileEnv(c cli, path string) (map[string]string, error) {
	var b []byte
	var err error
	if path == "-" {
		b, err = io.ReadAll(c.Stdin)
	} else {
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, err
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if raw, ok := doc["Environment"]; ok {
		var whole struct{ Variables map[string]json.RawMessage }
		if err := json.Unmarshal(raw, &whole); err != nil {
			return nil, fmt.Errorf("Environment: %w", err)
		}
		doc = whole.Variables
	}
	env := map[string]string{}
	var bad []string
	for k, raw := range doc {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			bad = append(bad, k)
			continue
		}
		env[k] = s
	}
	if len(bad) > 0 {
		slices.Sort(bad)
		return nil, fmt.Errorf("values that are not strings (Lambda takes only strings): %s", strings.Join(bad, ", "))
	}
	return env, nil
}

// functionEnv reads the deployed function's environment.
func functionEnv(ctx context.Context, c cli, name string, timeout time.Duration) (map[string]string, error) {
	s, _ := start(c, "config check", startSpec{})
	defer s.end()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if code := s.connect(ctx); code >= 0 {
		return nil, errors.New("no AWS configuration to read the function with")
	}
	conf, err := lambda.NewFromConfig(s.aws).GetFunctionConfiguration(ctx, &lambda.GetFunctionConfigurationInput{FunctionName: aws.String(name)})
	if err != nil {
		return nil, fmt.Errorf("reading function %s: %w", name, err)
	}
	if conf.Environment == nil {
		return map[string]string{}, nil
	}
	return conf.Environment.Variables, nil
}
