// Command drainpipe is Drainpipe's command-line tool. `drainpipe explain`
// shows what the function would make of SQS messages, offline; `drainpipe
// run` handles one SQS event as the function would, against a kubeconfig.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"

	"golang.org/x/term"

	"github.com/drainpipe/drainpipe/internal/version"
)

// Exit codes, documented in docs/cli.md: scripts tell them apart.
const (
	exitOK    = 0 // done, or nothing to do (ignored messages included)
	exitFail  = 1 // the work failed (an API call, writing the output)
	exitUsage = 2 // bad arguments, configuration or input
	exitRetry = 3 // some records would be retried (run)
)

// cli is a command's window on the world, so tests can run commands as
// functions.
type cli struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	// Terminal says standard input is a terminal: a bulk write may then
	// ask for confirmation instead of needing --yes.
	Terminal bool
}

// command is one subcommand.
type command struct {
	usage string
	run   func(ctx context.Context, c cli, args []string) int
}

// commands lists the subcommands; add new ones here.
func commands() map[string]command {
	return map[string]command{
		"explain":    {usage: "explain [--now TIME] [--function-arn ARN] [FILE|-]...   show what Drainpipe would do with SQS messages (no network)", run: explain},
		"run":        {usage: "run [--kubeconfig PATH] [--context NAME] [--dry-run] [--yes] [--function-arn ARN] [--timeout D] [FILE|-]   handle one SQS event for real, once", run: runEvent},
		"nodes":      {usage: "nodes [--kubeconfig PATH] [--context NAME] [-o wide|json] [NODE]   list the nodes Drainpipe holds out of service, or one's drain report", run: nodes},
		"uncordon":   {usage: "uncordon [--kubeconfig PATH] [--context NAME] [--dry-run] [--yes] [--force] NODE... | --all | -l SELECTOR   give nodes back as Drainpipe would", run: uncordon},
		"version":    {usage: "version   print the version, commit and Go version (also --version)", run: printVersion},
		"dlq":        {usage: "dlq list|redrive --queue URL [--to URL] [--resend] [--yes] [--max N] [-o json]   list the dead-letter queue with verdicts, or redrive it", run: dlqCmd},
		"event":      {usage: "event KIND [--instance ID] [--in 2m] [--at TIME] [--sqs] ...   write a fresh, valid event (spot, rebalance, asg-terminate, ...)", run: makeEvent},
		"nth-values": {usage: "nth-values VALUES.yaml...   print the stack context equivalent to aws-node-termination-handler Helm values files, and their conflicts", run: nthValues},
		"config":     {usage: "config check [--function NAME] [--timeout D] [FILE|-]   check a function's configuration as it does at start: every problem at once", run: configCmd},
		"webhook":    {usage: "webhook render|send [--reason TEXT] [--secret ARN | --secret-file FILE] [--timeout D]   a sample notice through the webhook template; send posts it as a test", run: webhookCmd},
		"check":      {usage: "check [--stack NAME | -c key=value ...] [-o json] ...   read-only pre-flight: hooks served, access, RBAC, flow control, alarm subscribers", run: checkCmd},
		"sweep":      {usage: "sweep [--kubeconfig PATH] [--context NAME] [--dry-run] [--yes] [--timeout D] [-o json]   run one sweep: repair held nodes a lost notice left, print its report", run: sweepCmd},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	c := cli{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Terminal: term.IsTerminal(int(os.Stdin.Fd()))}
	code := run(ctx, c, os.Args[1:])
	stop()
	os.Exit(code)
}

func run(ctx context.Context, c cli, args []string) int {
	cmds := commands()
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(c.Stderr, cmds)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	if args[0] == "--version" || args[0] == "-version" {
		args[0] = "version"
	}
	cmd, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(c.Stderr, "drainpipe: unknown command %q\n", args[0])
		usage(c.Stderr, cmds)
		return exitUsage
	}
	return cmd.run(ctx, c, args[1:])
}

// subcommand picks a command's verb from args[0] (one of verbs), or
// prints fs's usage, its flags included, and returns the exit code: 0 for
// -h, 2 otherwise.
func subcommand(fs *flag.FlagSet, args []string, verbs ...string) (string, int) {
	if len(args) > 0 && slices.Contains(verbs, args[0]) {
		return args[0], -1
	}
	fs.Usage()
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
		return "", exitOK
	}
	return "", exitUsage
}

func usage(w io.Writer, cmds map[string]command) {
	var lines []string
	for _, cmd := range cmds {
		lines = append(lines, "  drainpipe "+cmd.usage)
	}
	slices.Sort(lines)
	fmt.Fprintf(w, "usage:\n%s\n\nConfiguration comes from DRAINPIPE_* environment variables (see docs/configuration.md).\n", strings.Join(lines, "\n"))
}

const versionUsage = `usage: drainpipe version

Prints the version, the commit it was built from, and the Go version.
Exits 0 when printed, 2 on an unexpected argument.`

func printVersion(_ context.Context, c cli, args []string) int {
	fs := newFlags(c, "version", versionUsage)
	rest, code := parseArgs(fs, args)
	if code >= 0 {
		return code
	}
	var bad problems
	bad.none(rest)
	if code := bad.report(c, "version"); code >= 0 {
		return code
	}
	fmt.Fprintln(c.Stdout, version.Get())
	return exitOK
}
