package main

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/drainpipe/drainpipe/test/fleet"
)

// Neighbour is another tenant of the cluster, as a controller would be: an
// authenticated user outside Drainpipe's group, so API Priority and
// Fairness serves it at global-default, the level Drainpipe shares when
// no flow-control manifest is applied.
var Neighbour = fleet.Identity{User: "neighbour", Groups: []string{"tenants"}}

const (
	neighbourNS     = "neighbour"
	neighbourReads  = 20 // per second: a GET of its ConfigMap and a LIST of its pods, alternately
	neighbourWrites = 5  // per second: an UPDATE of its ConfigMap
)

// neighbourResult is what the neighbour saw during a run.
type neighbourResult struct {
	requests, rejected, failed int
	p99                        time.Duration
	lat                        []time.Duration // every answered request's, for pooling rounds
}

// neighbour sends a steady, open-loop rate of reads and writes (each at its
// tick, however slow the previous answers) and records every latency, the
// 429 rejections it met (client-go retries them, as controllers do: the
// latency includes the wait) and the requests that failed outright.
type neighbour struct {
	client   kubernetes.Interface
	sent     atomic.Int64 // at the wire, retries included
	rejected atomic.Int64
	mu       sync.Mutex
	lat      []time.Duration
	failed   int
}

// startNeighbour grants the neighbour its namespace and starts it; the
// returned stop ends it and reports.
func startNeighbour(ctx context.Context, admin kubernetes.Interface, base *rest.Config) (func() neighbourResult, error) {
	if err := grantNeighbour(ctx, admin); err != nil {
		return nil, err
	}
	n := &neighbour{}
	rc := Neighbour.Config(base)
	rc.QPS, rc.Burst = -1, 0
	rc.Wrap(func(rt http.RoundTripper) http.RoundTripper { return counting{rt, n} })
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("creating the neighbour's client: %w", err)
	}
	n.client = client
	nctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { n.every(nctx, &wg, time.Second/neighbourReads, n.read) })
	wg.Go(func() { n.every(nctx, &wg, time.Second/neighbourWrites, n.write) })
	return func() neighbourResult {
		cancel()
		wg.Wait()
		n.mu.Lock()
		defer n.mu.Unlock()
		return neighbourResult{requests: int(n.sent.Load()), rejected: int(n.rejected.Load()), failed: n.failed, p99: percentile(n.lat, 99), lat: slices.Clone(n.lat)}
	}, nil
}

// every calls fn at each tick on its own goroutine (open loop).
func (n *neighbour) every(ctx context.Context, wg *sync.WaitGroup, interval time.Duration, fn func(context.Context, int) error) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		wg.Go(func() {
			start := time.Now()
			err := fn(context.WithoutCancel(ctx), i)
			n.mu.Lock()
			defer n.mu.Unlock()
			if err != nil {
				n.failed++
				return
			}
			n.lat = append(n.lat, time.Since(start))
		})
	}
}

func (n *neighbour) read(ctx context.Context, i int) error {
	if i%2 == 0 {
		_, err := n.client.CoreV1().ConfigMaps(neighbourNS).Get(ctx, "state", metav1.GetOptions{})
		return err
	}
	_, err := n.client.CoreV1().Pods(neighbourNS).List(ctx, metav1.ListOptions{})
	return err
}

func (n *neighbour) write(ctx context.Context, i int) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "state", Namespace: neighbourNS}, Data: map[string]string{"tick": fmt.Sprint(i)}}
	_, err := n.client.CoreV1().ConfigMaps(neighbourNS).Update(ctx, cm, metav1.UpdateOptions{})
	return err
}

// counting counts the neighbour's requests at the wire and the 429s among
// them.
type counting struct {
	rt http.RoundTripper
	n  *neighbour
}

func (c counting) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.sent.Add(1)
	resp, err := c.rt.RoundTrip(r)
	if err == nil && resp.StatusCode == http.StatusTooManyRequests {
		c.n.rejected.Add(1)
	}
	return resp, err
}

// grantNeighbour makes its namespace, its ConfigMap and a Role letting it
// read pods and read and update ConfigMaps there.
func grantNeighbour(ctx context.Context, c kubernetes.Interface) error {
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: neighbourNS}}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating the neighbour's namespace: %w", err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "state"}, Data: map[string]string{"tick": "0"}}
	if _, err := c.CoreV1().ConfigMaps(neighbourNS).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating the neighbour's ConfigMap: %w", err)
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "neighbour"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "update"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list"}},
	}}
	if _, err := c.RbacV1().Roles(neighbourNS).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating the neighbour's Role: %w", err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "neighbour"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "neighbour"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: Neighbour.User}}}
	if _, err := c.RbacV1().RoleBindings(neighbourNS).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating the neighbour's RoleBinding: %w", err)
	}
	return nil
}

func percentile(ds []time.Duration, p float64) time.Duration { return fleet.Percentile(ds, p) }
