package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	kdrain "k8s.io/kubectl/pkg/drain"
)

// limit is the physical limit: an unthrottled client that cordons, lists,
// fires every eviction at once and waits, on a watch, until the pods are
// gone. It handles no error case a real drainer must.
func (b *bench) limit(ctx context.Context, node string) error {
	c := b.admin
	patch := []byte(`{"spec":{"unschedulable":true}}`)
	if _, err := c.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("cordoning: %w", err)
	}
	sel := "spec.nodeName=" + node
	list, err := c.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		return fmt.Errorf("listing pods: %w", err)
	}
	errs := make(chan error, len(list.Items))
	for _, p := range list.Items {
		go func() {
			ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name}}
			if err := c.CoreV1().Pods(p.Namespace).EvictV1(ctx, ev); err != nil && !apierrors.IsNotFound(err) {
				errs <- fmt.Errorf("evicting %s: %w", p.Name, err)
			}
		}()
	}
	// Wait on a watch from the list; the API server closes watches that
	// fall behind a burst of events, so resume from the last version seen.
	left := len(list.Items)
	rv := list.ResourceVersion
	for left > 0 {
		w, err := c.CoreV1().Pods("").Watch(ctx, metav1.ListOptions{FieldSelector: sel, ResourceVersion: rv})
		if err != nil {
			return fmt.Errorf("watching pods: %w", err)
		}
		for open := true; open && left > 0; {
			select {
			case err := <-errs:
				w.Stop()
				return err
			case ev, ok := <-w.ResultChan():
				if open = ok; !ok {
					break
				}
				p, isPod := ev.Object.(*corev1.Pod)
				if !isPod {
					w.Stop()
					return fmt.Errorf("watch event %s: %v", ev.Type, ev.Object)
				}
				rv = p.ResourceVersion
				if ev.Type == watch.Deleted {
					left--
				}
			}
		}
		w.Stop()
	}
	return nil
}

// kubectl drains with the CLI at path, as an operator would; without the
// CLI, with kubectl's drain library set up as the CLI sets it up (client-go's
// default 5 requests/s, 5 s between refused evictions).
func (b *bench) kubectl(ctx context.Context, path, node string) error {
	if isExecutable(path) {
		cmd := exec.CommandContext(ctx, path, "--kubeconfig", b.sb.KubeconfigPath(), "drain", node,
			"--force", "--ignore-daemonsets", "--delete-emptydir-data", "--grace-period=-1", "--timeout=5m")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("running kubectl drain: %w: %s", err, out.String())
		}
		return nil
	}
	rc := b.sb.RESTConfig()
	rc.QPS, rc.Burst = 0, 0 // client-go's defaults, as the CLI leaves them
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return fmt.Errorf("creating kubectl client: %w", err)
	}
	h := &kdrain.Helper{
		Ctx: ctx, Client: client, Force: true, IgnoreAllDaemonSets: true, DeleteEmptyDirData: true,
		GracePeriodSeconds: -1, EvictErrorRetryDelay: 5 * time.Second, Out: io.Discard, ErrOut: io.Discard,
	}
	n, err := client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("getting node: %w", err)
	}
	if err := kdrain.RunCordonOrUncordon(h, n, true); err != nil {
		return fmt.Errorf("cordoning: %w", err)
	}
	if err := kdrain.RunNodeDrain(h, node); err != nil {
		return fmt.Errorf("draining: %w", err)
	}
	return nil
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

func kubectlKind(path string) string {
	if isExecutable(path) {
		return "CLI " + path
	}
	return "kubectl drain library, client-go default QPS 5/burst 10"
}
