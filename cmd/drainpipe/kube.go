package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/drainpipe/drainpipe/internal/config"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/eks"
)

// nodeTimeout bounds the API calls of `nodes` and `uncordon`.
const nodeTimeout = time.Minute

// kubeFlags are --kubeconfig and --context, shared by the commands that
// reach a cluster.
type kubeFlags struct {
	kubeconfig *string
	context    *string
}

func addKubeFlags(fs *flag.FlagSet) kubeFlags {
	return kubeFlags{
		kubeconfig: fs.String("kubeconfig", "", "kubeconfig of the cluster (default $KUBECONFIG, then ~/.kube/config)"),
		context:    fs.String("context", "", "kubeconfig context (default its current context); an unknown one is an error"),
	}
}

// client returns the client of the chosen cluster; without --kubeconfig it
// uses $KUBECONFIG's first file or ~/.kube/config. An unknown --context is
// an error, as with kubectl: acting on the current context instead could
// uncordon nodes of the wrong cluster.
func (k kubeFlags) client(ctx context.Context, c cli) (kubernetes.Interface, error) {
	path := *k.kubeconfig
	if path == "" {
		path, _, _ = strings.Cut(c.Getenv("KUBECONFIG"), string(os.PathListSeparator))
	}
	if path == "" {
		if home, err := os.UserHomeDir(); err == nil {
			path = filepath.Join(home, ".kube", "config")
		}
	}
	local, err := eks.NewLocal(path, 0, 0)
	if err != nil {
		return nil, err
	}
	if *k.context != "" && !local.HasContext(*k.context) {
		return nil, fmt.Errorf("context %q not found in kubeconfig %s", *k.context, path)
	}
	return local.Client(ctx, *k.context)
}

// newFlags returns a flag set that prints usage, then the flags, on -h.
func newFlags(c cli, name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(c.Stderr)
	fs.Usage = func() {
		fmt.Fprintln(c.Stderr, usage)
		fs.PrintDefaults()
	}
	return fs
}

// parseArgs parses flags anywhere among args and returns the positional
// ones; code is -1 to go on, else the exit code (0 after -h).
func parseArgs(fs *flag.FlagSet, args []string) (rest []string, code int) {
	rest, err := parseInterspersed(fs, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return nil, exitOK
	case err != nil:
		return nil, exitUsage
	}
	return rest, -1
}

// parseInterspersed parses flags wherever they are among the positional
// arguments (`run event.json --dry-run`), which flag alone does not. After
// `--` everything is positional.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		before := len(args)
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		// flag stops at "--" and drops it: the rest is positional.
		consumed := before - fs.NArg()
		if consumed > 0 && args[consumed-1] == "--" {
			return append(pos, fs.Args()...), nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// withKubeconfig is getenv with DRAINPIPE_KUBECONFIG set to path (local
// mode) when path is given: --kubeconfig overrides the variable.
func withKubeconfig(getenv func(string) string, path string) func(string) string {
	if path == "" {
		return getenv
	}
	return func(k string) string {
		if k == config.Prefix+"KUBECONFIG" {
			return path
		}
		return getenv(k)
	}
}
