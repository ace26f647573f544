package main

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"
)

// The flags several commands share are made here, so their names, defaults,
// help and checks agree from one command to the next.

// timeExample is the example given wherever a time is asked for.
const timeExample = "2026-11-28T10:00:00Z"

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

// addLocalFlags are --kubeconfig and --context of the commands that act as
// the function does: without --kubeconfig they reach EKS, as in Lambda.
func addLocalFlags(fs *flag.FlagSet) kubeFlags {
	return kubeFlags{
		kubeconfig: fs.String("kubeconfig", "", "kubeconfig of the cluster to act on (local mode, over DRAINPIPE_KUBECONFIG); default EKS"),
		context:    fs.String("context", "", "kubeconfig context every cluster is reached through (default the one named after the cluster, else the current); an unknown one is an error"),
	}
}

func addDryRun(fs *flag.FlagSet, what string) *bool { return fs.Bool("dry-run", false, what) }

func addYes(fs *flag.FlagSet, what string) *bool { return fs.Bool("yes", false, what) }

func addTimeout(fs *flag.FlagSet, def time.Duration, what string) *time.Duration {
	return fs.Duration("timeout", def, what)
}

// addOutput is -o; the empty format is the command's table.
func addOutput(fs *flag.FlagSet, what string) *string { return fs.String("o", "", what) }

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

// parseTime reads a time flag (--at, --now) in RFC 3339.
func parseTime(flagName, v string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s %q: want a time in RFC 3339, e.g. %s", flagName, v, timeExample)
	}
	return t, nil
}

// problems gathers what is wrong with a command's arguments, so that all
// of it is said at once.
type problems []string

func (p *problems) add(bad bool, format string, a ...any) {
	if bad {
		*p = append(*p, fmt.Sprintf(format, a...))
	}
}

// timeout checks a --timeout.
func (p *problems) timeout(d time.Duration) {
	p.add(d <= 0, "--timeout must be positive, got %s", d)
}

// output checks -o against the formats a command prints.
func (p *problems) output(v string, formats ...string) {
	p.add(v != "" && !slices.Contains(formats, v), "-o %q: want %s", v, strings.Join(formats, " or "))
}

// none checks that no positional argument is left.
func (p *problems) none(rest []string) {
	p.add(len(rest) > 0, "unexpected argument %q", rest)
}

// report prints each problem as `drainpipe NAME: problem` and returns
// exitUsage, or -1 when there is none.
func (p problems) report(c cli, name string) int {
	for _, s := range p {
		fmt.Fprintf(c.Stderr, "drainpipe %s: %s\n", name, s)
	}
	if len(p) > 0 {
		return exitUsage
	}
	return -1
}
