// Package awsfake serves in-process fakes of the EC2, Auto Scaling, EKS and
// SQS APIs on 127.0.0.1, speaking their real wire protocols (EC2 query/XML,
// Auto Scaling query/XML, EKS REST/JSON, SQS AWS JSON 1.0), so the real
// aws-sdk-go-v2 clients can be pointed at them with BaseEndpoint. It records
// every call and can inject errors (throttling, access denied, inactive
// lifecycle actions). Like AWS it refuses a request whose SigV4 signature
// does not verify against the static test credentials it hands out.
//
// One server answers all four services: EC2 and Auto Scaling are told
// apart by their Action, EKS by its REST paths, SQS by its X-Amz-Target
// header (GetQueueUrl, ChangeMessageVisibility(Batch), ReceiveMessage,
// SendMessage, DeleteMessage, GetQueueAttributes,
// ListDeadLetterSourceQueues, StartMessageMoveTask; queues made by
// CreateQueue are modelled: receive counts, visibility, redrive).
//
//	fake := awsfake.New()
//	defer fake.Close()
//	fake.AddInstances(awsfake.Instance{ID: "i-0123456789abcdef0", Tags: map[string]string{"eks:cluster-name": "prod"}})
//	fake.AddLifecycleAction(awsfake.LifecycleAction{ASG: "workers", Hook: "drain", Token: tok, InstanceID: "i-0123456789abcdef0"})
//	fake.AddQueue("123456789012", "drainpipe")               // for GetQueueUrl
//	fake.Inject("DescribeInstances", awsfake.Throttle, 2) // then served
//	ec2c := ec2.NewFromConfig(fake.Config())              // in process
//	cmd.Env = append(os.Environ(), fake.Env()...)          // or a child process
//	... fake.CallsTo("CompleteLifecycleAction"), fake.Completed(), fake.VisibilityChanges()
package awsfake

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
)

// Region is the region Config uses and the fakes report.
const Region = "us-west-2"

// Service names used in Call.Service.
const (
	ServiceEC2         = "ec2"
	ServiceAutoScaling = "autoscaling"
	ServiceEKS         = "eks"
	ServiceSQS         = "sqs"
)

// Call is one request the server received.
type Call struct {
	Service string
	Action  string     // DescribeInstances, CompleteLifecycleAction, DescribeCluster, ...
	Params  url.Values // the form for query protocols; {"name": ...} for EKS; SQS's JSON flattened as a form
	Signed  bool       // SigV4-signed with the test credentials for the service (others are refused)
	// UserAgent is the request's User-Agent header (the SDK's, with the app id).
	UserAgent string
	Fault     Fault     // the fault answered, 0 when served normally
	Time      time.Time // when the request arrived (for timelines)
}

// Server is a running fake. Methods are safe for concurrent use.
type Server struct {
	srv *httptest.Server

	mu          sync.Mutex
	extraKeys   map[string]string // access key → secret, besides the fake's own (AllowCredentials)
	calls       []Call
	faults      map[string][]Fault // by action, consumed in order
	sticky      map[string]Fault   // by action, answered until cleared
	instances   map[string]Instance
	order       []string // instance IDs in insertion order, for stable pages
	scheduled   []ScheduledEvent
	clusters    map[string]Cluster
	actions     []LifecycleAction // active lifecycle actions
	completed   []Completion
	queues      []string // URLs of the queues made, in order
	badReceipts []string // receipt handles InvalidReceipts made fail
	visibility  []VisibilityChange
	hk          hookState              // lifecycle hooks and the timing of their actions
	models      map[string]*queueModel // every queue's model, by URL
	moveTasks   []MoveTask
	more        moreState // check's reads: groups, access entries, topics, stacks, functions
}

// New starts a fake on 127.0.0.1. Close it when done.
func New() *Server {
	s := &Server{
		faults:    map[string][]Fault{},
		sticky:    map[string]Fault{},
		instances: map[string]Instance{},
		clusters:  map[string]Cluster{},
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// URL is the base endpoint of all four services (http://127.0.0.1:port).
func (s *Server) URL() string { return s.srv.URL }

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Config returns an aws.Config for the fake: region us-west-2, static
// credentials, BaseEndpoint at the server, and the SDK's standard retryer
// with its backoff delay set to zero so tests of throttling stay fast (the
// retry decisions are the standard ones).
//
// Its HTTP client hands the transport a private copy of each request body.
// On loopback the fake can answer before the transport has made its final
// end-of-body read; the SDK closes its body as soon as the response is
// in, that read then fails and the transport tears the connection down
// under the response (a spurious retry, about one call in twenty for large
// responses on a loaded machine). Real endpoints are too far away for it.
func (s *Server) Config() aws.Config {
	return aws.Config{
		Region:       Region,
		BaseEndpoint: aws.String(s.URL()),
		HTTPClient:   bufferingClient{&http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}},
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: accessKeyID, SecretAccessKey: secretAccessKey, Source: "awsfake"}, nil
		}),
		Retryer: func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
			})
		},
	}
}

// Env returns environment variables pointing a child process's AWS SDK
// at the fake for the services it serves only (others keep their
// defaults), with the fake's region and static credentials.
func (s *Server) Env() []string {
	return []string{
		"AWS_ENDPOINT_URL_EC2=" + s.URL(),
		"AWS_ENDPOINT_URL_AUTO_SCALING=" + s.URL(),
		"AWS_ENDPOINT_URL_EKS=" + s.URL(),
		"AWS_ENDPOINT_URL_SQS=" + s.URL(),
		"AWS_ENDPOINT_URL_SNS=" + s.URL(),
		"AWS_ENDPOINT_URL_CLOUDFORMATION=" + s.URL(),
		"AWS_ENDPOINT_URL_LAMBDA=" + s.URL(),
		"AWS_REGION=" + Region,
		"AWS_ACCESS_KEY_ID=" + accessKeyID,
		"AWS_SECRET_ACCESS_KEY=" + secretAccessKey,
	}
}

type bufferingClient struct{ c *http.Client }

func (b bufferingClient) Do(r *http.Request) (*http.Response, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return b.c.Do(r)
	}
	data, err := io.ReadAll(r.Body)
	_ = r.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("buffering request body: %w", err)
	}
	r = r.Clone(r.Context())
	r.Body = io.NopCloser(bytes.NewReader(data))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	return b.c.Do(r)
}

// Calls returns every call received so far, in order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// CallsTo returns the calls of one action, in order.
func (s *Server) CallsTo(action string) []Call {
	var out []Call
	for _, c := range s.Calls() {
		if c.Action == action {
			out = append(out, c)
		}
	}
	return out
}

// Fault is an error the server can answer instead of serving a call.
type Fault int

// Faults, each answered in the service's own error format and code.
const (
	// Throttle: RequestLimitExceeded (EC2, 503), Throttling (Auto
	// Scaling, 400), ThrottlingException (EKS, 429).
	Throttle Fault = iota + 1
	// AccessDenied: UnauthorizedOperation (EC2), AccessDenied (Auto
	// Scaling), AccessDeniedException (EKS); all 403.
	AccessDenied
	// NoActiveLifecycleAction: the ValidationError Auto Scaling answers
	// for a lifecycle action that is completed or timed out.
	NoActiveLifecycleAction
	// NotFound: ResourceNotFoundException (EKS), InvalidInstanceID.NotFound (EC2).
	NotFound
	// Internal: a 500 InternalError (retried by the SDK).
	Internal
)

// Inject makes the next `times` calls of action answer fault. Faults
// injected for the same action queue up in order. times < 0 answers the
// fault until ClearFaults.
func (s *Server) Inject(action string, fault Fault, times int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if times < 0 {
		s.sticky[action] = fault
		return
	}
	for range times {
		s.faults[action] = append(s.faults[action], fault)
	}
}

// ClearFaults drops every injected fault.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.faults)
	clear(s.sticky)
}

// record logs the call and returns the fault to answer, if any.
func (s *Server) record(c Call) Fault {
	c.Time = time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if q := s.faults[c.Action]; len(q) > 0 {
		c.Fault, s.faults[c.Action] = q[0], q[1:]
	} else if f, ok := s.sticky[c.Action]; ok {
		c.Fault = f
	}
	s.calls = append(s.calls, c)
	return c.Fault
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if s.refused(w, r, body) {
		return
	}
	const signed = true // refused otherwise
	if s.serveMore(w, r, body) {
		return
	}
	if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/clusters/") {
		name, err := url.PathUnescape(strings.TrimPrefix(r.URL.Path, "/clusters/"))
		if err != nil || name == "" || strings.Contains(name, "/") {
			http.Error(w, "bad cluster path", http.StatusBadRequest)
			return
		}
		fault := s.record(Call{Service: ServiceEKS, Action: "DescribeCluster", Params: url.Values{"name": {name}}, Signed: signed, UserAgent: r.UserAgent()})
		s.describeCluster(w, name, fault)
		return
	}
	if r.Method != http.MethodPost || r.URL.Path != "/" {
		http.Error(w, fmt.Sprintf("awsfake: no route for %s %s", r.Method, r.URL.Path), http.StatusNotFound)
		return
	}
	if op, ok := strings.CutPrefix(r.Header.Get("X-Amz-Target"), sqsTargetPrefix); ok {
		s.serveSQS(w, r, op, body, signed)
		return
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	action := form.Get("Action")
	switch action {
	case "DescribeInstances":
		fault := s.record(Call{Service: ServiceEC2, Action: action, Params: form, Signed: signed, UserAgent: r.UserAgent()})
		s.describeInstances(w, form, fault)
	case "DescribeInstanceStatus":
		fault := s.record(Call{Service: ServiceEC2, Action: action, Params: form, Signed: signed})
		s.describeInstanceStatus(w, form, fault)
	case "CompleteLifecycleAction", "RecordLifecycleActionHeartbeat":
		fault := s.record(Call{Service: ServiceAutoScaling, Action: action, Params: form, Signed: signed, UserAgent: r.UserAgent()})
		s.lifecycleAction(w, action, form, fault)
	case "DescribeLifecycleHooks":
		fault := s.record(Call{Service: ServiceAutoScaling, Action: action, Params: form, Signed: signed, UserAgent: r.UserAgent()})
		s.describeLifecycleHooks(w, form, fault)
	default:
		s.record(Call{Action: action, Params: form, Signed: signed, UserAgent: r.UserAgent()})
		http.Error(w, "awsfake: unsupported action "+action, http.StatusBadRequest)
	}
}

// requestID is constant: nothing reads it but the SDK's error messages.
const requestID = "00000000-0000-4000-8000-000000000000"
