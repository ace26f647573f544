// Command demo shows Drainpipe's main job on this machine (`make demo`): a
// real Kubernetes control plane on 127.0.0.1 (test/sandbox) with three
// EKS-like nodes and their workloads, fakes of EC2 and Auto Scaling
// (test/awsfake), and the real Lambda bootstrap run under a local Lambda
// Runtime API (test/lambdart) in local mode. It sends a Spot interruption
// warning for node 1 and an Auto Scaling terminate hook for node 2 as SQS
// events, prints what happened when, and the cluster's final state.
//
// Everything it starts is stopped by PID when it ends, on error and on
// interrupt too.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/lambdart"
	"github.com/drainpipe/drainpipe/test/sandbox"
)

// invokeTimeout is each invocation's deadline, the function's timeout.
const invokeTimeout = 90 * time.Second

func main() {
	bootstrap := flag.String("bootstrap", "", "the bootstrap to run (default: dist/local/bootstrap, built when missing)")
	verbose := flag.Bool("v", false, "also copy the bootstrap's raw log lines to standard error")
	eksMode := flag.Bool("eks", false, "EKS mode: no kubeconfig; the bootstrap signs EKS tokens that the real aws-iam-authenticator webhook checks")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	start := time.Now()
	err := demo(ctx, os.Stdout, *bootstrap, *verbose, *eksMode)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "\ndemo failed after %.1f s: %v\n", time.Since(start).Seconds(), err)
		os.Exit(1)
	}
	fmt.Printf("\nDemo finished in %.1f s.\n", time.Since(start).Seconds())
}

// demo runs the whole show; every deferred stop runs whatever happens.
func demo(ctx context.Context, w io.Writer, bootstrap string, verbose, eksMode bool) (err error) {
	var stops []func() // in start order; run in reverse
	defer func() {
		section(w, "Cleaning up (bootstrap, AWS fakes, control plane: stopped by PID)")
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}()
	section(w, "The real bootstrap: the function itself, built for this machine")
	if bootstrap, err = ensureBootstrap(ctx, w, bootstrap); err != nil {
		return err
	}

	section(w, "Starting a Kubernetes control plane on 127.0.0.1 (etcd, kube-apiserver, controller-manager, scheduler, kwok)")
	t0 := time.Now()
	sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	sb, err := sandbox.Start(sctx, sandboxOptions(eksMode))
	cancel()
	if err != nil {
		return fmt.Errorf("starting the sandbox: %w", err)
	}
	stops = append(stops, func() { stopped(w, "control plane", sb.Stop) })
	fmt.Fprintf(w, "  ready in %d ms; kubeconfig %s\n", time.Since(t0).Milliseconds(), sb.KubeconfigPath())

	fake := awsfake.New()
	stops = append(stops, func() { stopped(w, "AWS fakes", func() error { fake.Close(); return nil }) })

	section(w, "Creating three EKS-like nodes (kwok simulates their kubelets) and their workloads")
	sctx, cancel = context.WithTimeout(ctx, 3*time.Minute)
	sc, err := buildScene(sctx, w, sb.RESTConfig(), fake)
	cancel()
	if err != nil {
		return err
	}

	section(w, "Starting the AWS fakes (EC2, Auto Scaling) on "+fake.URL())
	fmt.Fprintf(w, "  EC2 knows the 3 instances, tagged eks:cluster-name=%s, with each node's PrivateDnsName\n", clusterName)
	fmt.Fprintf(w, "  Auto Scaling holds node 2's instance in lifecycle hook %s/%s\n", asgName, hookName)

	mode, access := "local", []string{"DRAINPIPE_KUBECONFIG=" + sb.KubeconfigPath()}
	if eksMode {
		if access, err = eksAccess(ctx, w, sb, sc, fake); err != nil {
			return err
		}
		mode = "EKS"
	}
	section(w, "Starting the real bootstrap under a local Lambda Runtime API, in "+mode+" mode")
	opts := lambdart.Options{
		Bootstrap:    bootstrap,
		FunctionName: "drainpipe-demo",
		Region:       awsfake.Region,
		MemoryMB:     256,
		Env: append(append(fake.Env(), access...),
			"DRAINPIPE_CLUSTERS="+clusterName,
			"DRAINPIPE_LOG_LEVEL=debug", // the timeline shows when each pod is gone
		),
	}
	if verbose {
		opts.Stdout = os.Stderr
	}
	lctx, cancel := context.WithTimeout(ctx, time.Minute)
	rt, err := lambdart.Launch(lctx, opts)
	if err == nil {
		stops = append(stops, func() { stopped(w, "bootstrap", rt.Close) })
		var init time.Duration
		if init, err = rt.Ready(lctx); err == nil {
			fmt.Fprintf(w, "  bootstrap pid %d, init %d ms, %s, DRAINPIPE_CLUSTERS=%s\n",
				rt.PID(), init.Milliseconds(), strings.Replace(access[0], "AWS_ACCESS_KEY_ID=", "role credentials ", 1), clusterName)
		}
	}
	cancel()
	if err != nil {
		return fmt.Errorf("starting the bootstrap: %w", err)
	}

	n := names{nodes: map[string]string{}, namespace: sc.env.Namespace}
	for i, node := range sc.nodes {
		n.nodes[node.Name] = fmt.Sprintf("node %d", i+1)
	}
	now := time.Now()
	section(w, fmt.Sprintf("Event 1: EC2 Spot interruption warning for node 1 (%s), instance goes at %s",
		sc.instance(0), now.Add(2*time.Minute).UTC().Format("15:04:05")))
	if err := send(ctx, w, rt, fake, n, "spot-1", spotWarning(sc.instance(0), now)); err != nil {
		return err
	}
	section(w, fmt.Sprintf("Event 2: Auto Scaling terminate lifecycle hook for node 2 (%s)", sc.instance(1)))
	if err := send(ctx, w, rt, fake, n, "hook-1", terminateHook(sc.instance(1), time.Now())); err != nil {
		return err
	}

	section(w, "Final state of the cluster")
	fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := printState(fctx, w, sc, n); err != nil {
		return err
	}
	if pending := fake.Pending(); len(pending) > 0 {
		return fmt.Errorf("lifecycle actions still pending: %+v", pending)
	}
	fmt.Fprintln(w, "\n  Auto Scaling: no lifecycle action pending (node 2's instance was released)")
	return nil
}

// send invokes the function with one SQS message and prints its timeline.
func send(ctx context.Context, w io.Writer, rt *lambdart.Runtime, fake *awsfake.Server, n names, id string, body map[string]any) error {
	payload, err := sqsEvent(id, body, time.Now())
	if err != nil {
		return err
	}
	linesBefore, recordsBefore, callsBefore := len(rt.Logs()), len(rt.Records()), len(fake.Calls())
	res, err := rt.Invoke(ctx, payload, invokeTimeout)
	if err != nil {
		return fmt.Errorf("invoking %s: %w", id, err)
	}
	received := time.Now().Add(-res.Duration)
	if res.Error != nil {
		return fmt.Errorf("invoking %s: function error %s: %s", id, res.Error.Type, res.Error.Message)
	}
	// The answer can overtake the last log lines on their way through the
	// pipe: wait for this invocation's summary line.
	line := 0
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	_, err = rt.WaitLog(wctx, func(l string) bool {
		line++
		return line > linesBefore && strings.Contains(l, `"msg":"batch handled"`)
	})
	cancel()
	if err != nil {
		return fmt.Errorf("reading the logs of %s: %w", id, err)
	}
	steps := logSteps(rt.Records()[recordsBefore:], n)
	steps = append(steps, callSteps(fake.Calls()[callsBefore:])...)
	printTimeline(w, received, steps)
	fmt.Fprintf(w, "\n  function answered in %d ms: %s\n", res.Duration.Milliseconds(), res.Body)
	return nil
}

// ensureBootstrap returns the bootstrap to run, building dist/local/bootstrap
// as `make build-local` does when it is missing.
func ensureBootstrap(ctx context.Context, w io.Writer, path string) (string, error) {
	if path != "" {
		if _, err := os.Stat(path); err != nil {
			return "", fmt.Errorf("checking the bootstrap: %w", err)
		}
		fmt.Fprintf(w, "  using %s\n", path)
		return path, nil
	}
	root, err := lambdart.ModuleRoot(ctx, ".")
	if err != nil {
		return "", err
	}
	path = filepath.Join(root, "dist", "local", "bootstrap")
	if _, err := os.Stat(path); err == nil {
		fmt.Fprintf(w, "  using %s (make build-local rebuilt it if the code changed)\n", path)
		return path, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("checking the bootstrap: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", fmt.Errorf("creating %s: %w", filepath.Dir(path), err)
	}
	fmt.Fprintf(w, "  building %s\n", path)
	if err := (lambdart.Build{Dir: root, Package: "./lambda", Output: path, Strip: true}).Run(ctx); err != nil {
		return "", err
	}
	return path, nil
}

func section(w io.Writer, title string) {
	fmt.Fprintf(w, "\n== %s ==\n", title)
}

// stopped stops one component and says so; a failure is printed, not
// returned, so the other components are still stopped.
func stopped(w io.Writer, what string, stop func() error) {
	if err := stop(); err != nil {
		fmt.Fprintf(w, "  stopping %s: %v\n", what, err)
		return
	}
	fmt.Fprintf(w, "  stopped %s\n", what)
}
