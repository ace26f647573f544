// Command sandbox starts and stops a detached local control plane for
// people (make sandbox-up / make sandbox-down):
//
//	sandbox up [-dir DIR] [-nodes N]   start it, print the kubeconfig path
//	sandbox down [-dir DIR]            stop it by the PIDs it recorded
//
// DIR defaults to ${XDG_CACHE_HOME:-$HOME/.cache}/drainpipe/sandbox-run.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/test/sandbox"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Getenv); err != nil {
		fmt.Fprintln(os.Stderr, "sandbox:", err)
		os.Exit(1)
	}
}

func run(args []string, out io.Writer, getenv func(string) string) error {
	if len(args) == 0 || (args[0] != "up" && args[0] != "down") {
		return errors.New("usage: sandbox up [-dir DIR] [-nodes N] | sandbox down [-dir DIR]")
	}
	fs := flag.NewFlagSet("sandbox "+args[0], flag.ContinueOnError)
	dir := fs.String("dir", defaultDir(getenv), "sandbox directory (certificates, etcd data, logs, PIDs)")
	nodes := fs.Int("nodes", 3, "EKS-like kwok nodes to create (up)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if args[0] == "down" {
		if err := sandbox.StopDir(*dir); err != nil {
			return err
		}
		fmt.Fprintf(out, "sandbox stopped; logs remain in %s\n", filepath.Join(*dir, "logs"))
		return nil
	}
	return up(*dir, *nodes, out, getenv)
}

func defaultDir(getenv func(string) string) string {
	cache := getenv("XDG_CACHE_HOME")
	if cache == "" {
		cache = filepath.Join(getenv("HOME"), ".cache")
	}
	return filepath.Join(cache, "drainpipe", "sandbox-run")
}

func up(dir string, nodes int, out io.Writer, getenv func(string) string) error {
	if _, err := os.Stat(filepath.Join(dir, "sandbox.json")); err == nil {
		return fmt.Errorf("a sandbox is already up in %s: run make sandbox-down first", dir)
	}
	// Only a directory a previous sandbox left (or none) is wiped.
	if _, err := os.Stat(filepath.Join(dir, "pki")); err == nil {
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("removing the previous sandbox: %w", err)
		}
	} else if entries, _ := os.ReadDir(dir); len(entries) > 0 {
		return fmt.Errorf("%s is not empty and not a sandbox directory", dir)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	begin := time.Now()
	sb, err := sandbox.Start(ctx, sandbox.Options{
		BinDir: sandbox.DefaultBinDir(getenv), Dir: dir, KeepDir: true, Detach: true,
	})
	if err != nil {
		return err
	}
	elapsed := time.Since(begin)
	if err := createNodes(ctx, sb, nodes, out); err != nil {
		return errors.Join(err, sb.Stop())
	}
	fmt.Fprintf(out, "sandbox ready in %.1f s (Kubernetes %s); logs in %s\n", elapsed.Seconds(), sandbox.KubernetesVersion(getenv), sb.LogDir())
	fmt.Fprintf(out, "kubeconfig: %s\n", sb.KubeconfigPath())
	fmt.Fprintf(out, "  kubectl --kubeconfig %s get nodes\n", sb.KubeconfigPath())
	fmt.Fprintln(out, "stop it with: make sandbox-down")
	return nil
}

func createNodes(ctx context.Context, sb *sandbox.Sandbox, n int, out io.Writer) error {
	client, err := kubernetes.NewForConfig(sb.RESTConfig())
	if err != nil {
		return fmt.Errorf("creating client: %w", err)
	}
	zones := []string{"a", "b", "c"}
	for i := range n {
		node := fixture.EKSNode(fixture.NodeOptions{Zone: "us-west-2" + zones[i%len(zones)]}, nil)
		if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating node %s: %w", node.Name, err)
		}
		fmt.Fprintf(out, "node %s (%s)\n", node.Name, node.Spec.ProviderID)
	}
	return nil
}
