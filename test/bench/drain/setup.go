package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// setupTimeout bounds creating a scene; kwok makes a thousand pods Ready
// in seconds.
const setupTimeout = 3 * time.Minute

// scene is one measurement's namespace and nodes.
type scene struct {
	ns    string
	nodes []string
	pods  int // in all
}

// setup creates a namespace, nodes EKS-like kwok nodes and pods bare pods
// bound to each, and waits until all are Ready.
func (b *bench) setup(ctx context.Context, nodes, pods int) (*scene, error) {
	ctx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	b.seq++
	sc := &scene{ns: fmt.Sprintf("bench-%d-%s", b.seq, randomHex(3)), pods: nodes * pods}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: sc.ns}}
	if _, err := b.admin.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("creating namespace: %w", err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	if _, err := b.admin.CoreV1().ServiceAccounts(sc.ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating service account: %w", err)
	}
	for range nodes {
		n, err := b.admin.CoreV1().Nodes().Create(ctx, fixture.EKSNode(fixture.NodeOptions{MaxPods: pods + 50}, nil), metav1.CreateOptions{})
		if err != nil {
			return nil, fmt.Errorf("creating node: %w", err)
		}
		sc.nodes = append(sc.nodes, n.Name)
	}
	if err := sc.waitNodesReady(ctx, b.admin); err != nil {
		return nil, err
	}
	if err := sc.createPods(ctx, b.admin, pods); err != nil {
		return nil, err
	}
	return sc, sc.waitPodsReady(ctx, b.admin)
}

func (sc *scene) waitNodesReady(ctx context.Context, c kubernetes.Interface) error {
	for _, name := range sc.nodes {
		err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			n, err := c.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			for _, cond := range n.Status.Conditions {
				if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("waiting for node %s: %w", name, err)
		}
	}
	return nil
}

// createPods creates perNode bare pods on each node, 32 requests at a time.
func (sc *scene) createPods(ctx context.Context, c kubernetes.Interface, perNode int) error {
	zero, no := int64(0), false
	jobs := make(chan *corev1.Pod)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for p := range jobs {
				if _, err := c.CoreV1().Pods(sc.ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
					select {
					case errs <- fmt.Errorf("creating pod %s: %w", p.Name, err):
					default:
					}
				}
			}
		})
	}
	for i, node := range sc.nodes {
		for j := range perNode {
			jobs <- &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("app-%d-%d", i, j), Labels: map[string]string{"app": "bench"}},
				Spec: corev1.PodSpec{
					NodeName:                      node,
					Containers:                    []corev1.Container{{Name: "app", Image: fixture.Image}},
					TerminationGracePeriodSeconds: &zero,
					AutomountServiceAccountToken:  &no,
					EnableServiceLinks:            &no,
				},
			}
		}
	}
	close(jobs)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

func (sc *scene) waitPodsReady(ctx context.Context, c kubernetes.Interface) error {
	ready := 0
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		list, err := c.CoreV1().Pods(sc.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		ready = 0
		for i := range list.Items {
			if fixture.IsReady(&list.Items[i]) {
				ready++
			}
		}
		return ready == sc.pods, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %d pods to be Ready (%d are): %w", sc.pods, ready, err)
	}
	return nil
}

// checkEmpty fails unless every pod of the scene is gone.
func (sc *scene) checkEmpty(ctx context.Context, c kubernetes.Interface) error {
	list, err := c.CoreV1().Pods(sc.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing pods: %w", err)
	}
	if n := len(list.Items); n > 0 {
		return fmt.Errorf("%d pods left after the drain", n)
	}
	return nil
}

// teardown deletes the namespace and nodes without waiting.
func (sc *scene) teardown(c kubernetes.Interface) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	zero := int64(0)
	del := metav1.DeleteOptions{GracePeriodSeconds: &zero}
	_ = c.CoreV1().Namespaces().Delete(ctx, sc.ns, del)
	for _, n := range sc.nodes {
		_ = c.CoreV1().Nodes().Delete(ctx, n, del)
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on Linux
	return hex.EncodeToString(b)
}
