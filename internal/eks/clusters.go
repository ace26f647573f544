// Package eks authenticates to EKS clusters and builds their clients.
//
// Clusters builds one Kubernetes clientset per cluster and keeps it for the
// life of the container, unless its endpoint fails and DescribeCluster
// now tells another, or it fails FailureLimit times in a row (see
// watchdog): the endpoint and CA come from eks:DescribeCluster
// (once per client) or from configuration, and every request carries an
// aws-iam-authenticator token that the transport keeps fresh. Local builds
// the same from a kubeconfig, for running against any cluster by hand.
package eks

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awseks "github.com/aws/aws-sdk-go-v2/service/eks"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/drainpipe/drainpipe/internal/awserr"
	"github.com/drainpipe/drainpipe/internal/kubewire"
)

// Client-side rate limits. Client-go's defaults (5/10) turn a 100-pod
// drain into 20 s of waiting; the API server's own priority and fairness
// is the real limit.
const (
	DefaultQPS   = 200
	DefaultBurst = 400
)

// Endpoint is where a cluster's API server is and how to trust it.
type Endpoint struct {
	URL    string // https://...
	CAData []byte // PEM; empty trusts the system roots
}

// Options tune Clusters. The zero value is usable.
type Options struct {
	QPS   float32 // DefaultQPS when 0
	Burst int     // DefaultBurst when 0
	// Overrides give endpoints by cluster name (private endpoints
	// reached through a proxy, pre-known endpoints). With CAData, or an
	// http URL on loopback, DescribeCluster is not called; an https URL
	// without CAData still takes the CA from DescribeCluster.
	Overrides map[string]Endpoint
	// Now is the clock tokens are signed with (time.Now when nil).
	Now func() time.Time
}

// describeAPI is the part of the EKS client Clusters uses.
type describeAPI interface {
	DescribeCluster(ctx context.Context, in *awseks.DescribeClusterInput, optFns ...func(*awseks.Options)) (*awseks.DescribeClusterOutput, error)
}

var _ describeAPI = (*awseks.Client)(nil)

// Clusters hands out Kubernetes clients for EKS clusters by name.
type Clusters struct {
	eks     describeAPI
	signer  *Signer
	opts    Options
	wrapper func(http.RoundTripper) http.RoundTripper // tests: observe requests

	mu      sync.Mutex
	entries map[string]*entry
}

// entry serialises building one cluster's client without blocking others.
type entry struct {
	mu     sync.Mutex
	client kubernetes.Interface
	gen    int       // counts clients dropped by their watchdog
	next   *Endpoint // described by a check that dropped the client; used once
}

// New returns Clusters using cfg for eks:DescribeCluster and for signing
// tokens (which needs credentials and a region, but no IAM permission).
func New(cfg aws.Config, opts Options) *Clusters {
	if opts.QPS == 0 {
		opts.QPS = DefaultQPS
	}
	if opts.Burst == 0 {
		opts.Burst = DefaultBurst
	}
	return &Clusters{
		eks:     awseks.NewFromConfig(cfg),
		signer:  NewSigner(cfg, opts.Now),
		opts:    opts,
		entries: map[string]*entry{},
	}
}

// Client returns the clientset for cluster, building it on first use. A
// failed build is not cached: the next call tries again.
func (c *Clusters) Client(ctx context.Context, cluster string) (kubernetes.Interface, error) {
	if cluster == "" {
		return nil, errors.New("building kubernetes client: empty cluster name")
	}
	c.mu.Lock()
	e, ok := c.entries[cluster]
	if !ok {
		e = &entry{}
		c.entries[cluster] = e
	}
	c.mu.Unlock()

	e.mu.Lock()
	defer e.mu.Unlock()
	if e.client != nil {
		return e.client, nil
	}
	var ep Endpoint
	if e.next != nil {
		ep, e.next = *e.next, nil
	} else {
		var err error
		if ep, err = c.endpoint(ctx, cluster); err != nil {
			return nil, err
		}
	}
	gen := e.gen
	check := func(ctx context.Context) { c.recheck(ctx, cluster, e, gen, ep) }
	client, err := kubernetes.NewForConfig(c.restConfig(cluster, ep, check, func() { e.forget(gen, nil) }))
	if err != nil {
		return nil, fmt.Errorf("building kubernetes client for cluster %s: %w", cluster, err)
	}
	e.client = client
	return client, nil
}

// forget drops the client of generation gen, so the next Client uses
// next or, when nil, describes the cluster again; a newer client is left
// alone.
func (e *entry) forget(gen int, next *Endpoint) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.gen == gen {
		e.client, e.next = nil, next
		e.gen++
	}
}

// recheck describes the cluster again after a failure of the client of
// generation gen, built for was, and drops that client at once if the
// endpoint or CA changed (the cluster was recreated). An unchanged
// answer, or none, leaves it to the watchdog's FailureLimit.
func (c *Clusters) recheck(ctx context.Context, cluster string, e *entry, gen int, was Endpoint) {
	now, err := c.endpoint(ctx, cluster)
	if err != nil || (now.URL == was.URL && bytes.Equal(now.CAData, was.CAData)) {
		return
	}
	e.forget(gen, &now)
}

// restConfig builds the client configuration; check is called on the
// first endpoint failure, drop after FailureLimit in a row.
func (c *Clusters) restConfig(cluster string, ep Endpoint, check func(context.Context), drop func()) *rest.Config {
	rc := &rest.Config{
		Host:            ep.URL,
		TLSClientConfig: rest.TLSClientConfig{CAData: ep.CAData},
		WrapTransport: func(rt http.RoundTripper) http.RoundTripper {
			if c.wrapper != nil {
				rt = c.wrapper(rt)
			}
			rt = &watchdog{base: rt, check: check, drop: drop}
			return &bearer{base: rt, cluster: cluster, tokens: c.signer}
		},
	}
	kubewire.Tune(rc, c.opts.QPS, c.opts.Burst)
	return rc
}

// endpoint returns the configured override or asks DescribeCluster. An
// https override without a CA takes the CA from DescribeCluster: EKS
// serves its API with a certificate of the cluster's own CA.
func (c *Clusters) endpoint(ctx context.Context, cluster string) (Endpoint, error) {
	if ep, ok := c.opts.Overrides[cluster]; ok {
		if err := CheckEndpoint(ep.URL); err != nil {
			return Endpoint{}, fmt.Errorf("checking endpoint override for cluster %s: %w", cluster, err)
		}
		if len(ep.CAData) > 0 || strings.HasPrefix(ep.URL, "http:") {
			return ep, nil
		}
		described, err := c.describe(ctx, cluster)
		if err != nil {
			return Endpoint{}, err
		}
		ep.CAData = described.CAData
		return ep, nil
	}
	return c.describe(ctx, cluster)
}

func (c *Clusters) describe(ctx context.Context, cluster string) (Endpoint, error) {
	out, err := c.eks.DescribeCluster(ctx, &awseks.DescribeClusterInput{Name: aws.String(cluster)})
	if err != nil {
		return Endpoint{}, fmt.Errorf("describing cluster %s: %w", cluster, awserr.Classify(err))
	}
	cl := out.Cluster
	if cl == nil || aws.ToString(cl.Endpoint) == "" {
		status := "unknown"
		if cl != nil {
			status = string(cl.Status)
		}
		return Endpoint{}, fmt.Errorf("describing cluster %s: no endpoint (status %s)", cluster, status)
	}
	ep := Endpoint{URL: aws.ToString(cl.Endpoint)}
	if err := CheckEndpoint(ep.URL); err != nil {
		return Endpoint{}, fmt.Errorf("describing cluster %s: %w", cluster, err)
	}
	if cl.CertificateAuthority == nil || aws.ToString(cl.CertificateAuthority.Data) == "" {
		return Endpoint{}, fmt.Errorf("describing cluster %s: no certificate authority", cluster)
	}
	ep.CAData, err = base64.StdEncoding.DecodeString(aws.ToString(cl.CertificateAuthority.Data))
	if err != nil {
		return Endpoint{}, fmt.Errorf("decoding certificate authority of cluster %s: %w", cluster, err)
	}
	return ep, nil
}

// CheckEndpoint accepts https URLs, and http ones on loopback only (tests
// and local proxies): a bearer token must not cross a network in clear.
// The configuration checks overrides with it at start-up too.
func CheckEndpoint(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("parsing endpoint: %w", err)
	}
	if u.Host == "" {
		return fmt.Errorf("endpoint %q has no host", raw)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if ip := net.ParseIP(u.Hostname()); (ip != nil && ip.IsLoopback()) || u.Hostname() == "localhost" {
			return nil
		}
		return fmt.Errorf("endpoint %q: plain http is only allowed to a loopback address", raw)
	}
	return fmt.Errorf("endpoint %q: want https", raw)
}
