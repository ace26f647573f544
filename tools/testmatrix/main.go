// Command testmatrix runs the sandbox tests against each Kubernetes version
// of the support matrix: for every version it builds (or reuses) the
// sandbox's binaries with build.sh, runs go test on the given packages with
// DRAINPIPE_K8S_VERSION set, and prints one row per version for
// docs/support.md's table: the counts, the wall time and the commit.
//
//	go run ./tools/testmatrix -build test/sandbox/build/build.sh -out dist/matrix -versions "v1.32.13 v1.36.3" PKG...
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "testmatrix:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("testmatrix", flag.ContinueOnError)
	fs.SetOutput(stderr)
	build := fs.String("build", "test/sandbox/build/build.sh", "the script that builds a version's sandbox binaries")
	out := fs.String("out", "dist/matrix", "directory for each version's go test -json stream")
	versions := fs.String("versions", "", "the Kubernetes versions, space-separated")
	goCmd := fs.String("go", "go", "the go command")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var problems []error
	if strings.TrimSpace(*versions) == "" {
		problems = append(problems, errors.New("-versions: none given"))
	}
	if fs.NArg() == 0 {
		problems = append(problems, errors.New("no packages given"))
	}
	if err := errors.Join(problems...); err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	commit := gitCommit(ctx)
	var rows []string
	var failed []string
	for _, v := range strings.Fields(*versions) {
		r, err := runVersion(ctx, v, *build, *goCmd, fs.Args(), filepath.Join(*out, v+".json"), stderr)
		if err != nil {
			return fmt.Errorf("Kubernetes %s: %w", v, err)
		}
		rows = append(rows, r.row(v, commit))
		if !r.passed() {
			failed = append(failed, v)
		}
	}
	fmt.Fprintln(stdout, header)
	for _, r := range rows {
		fmt.Fprintln(stdout, r)
	}
	if len(failed) > 0 {
		return fmt.Errorf("failed on Kubernetes %s (go test -json streams in %s)", strings.Join(failed, ", "), *out)
	}
	return nil
}

// runVersion builds version's binaries and runs the packages' tests against
// them, writing go test's JSON stream to jsonPath.
func runVersion(ctx context.Context, version, build, goCmd string, pkgs []string, jsonPath string, stderr io.Writer) (result, error) {
	env := append(os.Environ(), "DRAINPIPE_K8S_VERSION="+version)
	fmt.Fprintf(stderr, "testmatrix: Kubernetes %s: building the sandbox\n", version)
	b := exec.CommandContext(ctx, build)
	b.Env, b.Stdout, b.Stderr = env, stderr, stderr
	if err := b.Run(); err != nil {
		return result{}, fmt.Errorf("building the sandbox: %w", err)
	}
	f, err := os.Create(jsonPath)
	if err != nil {
		return result{}, err
	}
	defer f.Close()
	fmt.Fprintf(stderr, "testmatrix: Kubernetes %s: go test -count=1 %s\n", version, strings.Join(pkgs, " "))
	start := time.Now()
	t := exec.CommandContext(ctx, goCmd, append([]string{"test", "-count=1", "-json"}, pkgs...)...)
	var stream bytes.Buffer
	t.Env, t.Stdout, t.Stderr = env, io.MultiWriter(f, &stream), stderr
	runErr := t.Run()
	r, err := summarise(&stream, stderr)
	if err != nil {
		return result{}, fmt.Errorf("reading go test -json: %w", err)
	}
	r.wall = time.Since(start)
	// go test exits non-zero for a build failure too, which no test event
	// reports: count it as a failed package.
	var exit *exec.ExitError
	if errors.As(runErr, &exit) && r.failedTests == 0 && r.failedPkgs == 0 {
		r.failedPkgs = 1
	} else if runErr != nil && !errors.As(runErr, &exit) {
		return result{}, fmt.Errorf("running go test: %w", runErr)
	}
	return r, nil
}

// gitCommit is HEAD's short hash, with -dirty when the tree has changes.
func gitCommit(ctx context.Context) string {
	out, err := exec.CommandContext(ctx, "git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(out))
	if exec.CommandContext(ctx, "git", "diff", "--quiet", "HEAD", "--").Run() != nil {
		c += "-dirty"
	}
	return c
}
