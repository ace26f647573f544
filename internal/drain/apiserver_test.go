package drain_test

// client-go against an httptest API server: what the fake clientset cannot
// show, because it skips client-go's request and retry layer.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/drainpipe/drainpipe/internal/drain"
)

// answer is one scripted HTTP answer.
type answer struct {
	code       int
	retryAfter string // Retry-After header, when set
	status     *metav1.Status
}

// apiServer serves one node with one pod, ns/p, and answers its evictions
// from a script (201 once the script runs out).
type apiServer struct {
	t      *testing.T
	node   corev1.Node
	pod    corev1.Pod
	script []answer

	closeWatches bool // end every watch at once, without an event
	hold         bool // an accepted eviction or delete leaves the pod terminating for ever (a finalizer)

	mu        sync.Mutex
	deletes   []metav1.DeleteOptions
	watches   int
	evictions []policyv1.Eviction // bodies received, in order
	evicted   chan struct{}       // closed when an eviction is accepted
}

func newAPIServer(t *testing.T, script ...answer) (*apiServer, kubernetes.Interface) {
	s := &apiServer{
		t:       t,
		node:    corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", ResourceVersion: "1"}},
		pod:     corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "uid-p", ResourceVersion: "1"}, Spec: corev1.PodSpec{NodeName: "n1", TerminationGracePeriodSeconds: ptr.To[int64](300)}, Status: corev1.PodStatus{Phase: corev1.PodRunning}},
		script:  script,
		evicted: make(chan struct{}),
	}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	client, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL, QPS: -1})
	if err != nil {
		t.Fatalf("creating client: %v", err)
	}
	return s, client
}

func (s *apiServer) serve(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/api/v1/nodes/n1":
		s.write(w, http.StatusOK, &s.node)
	case r.URL.Path == "/api/v1/pods" && r.URL.Query().Get("watch") == "true":
		s.watch(w, r)
	case r.URL.Path == "/api/v1/pods":
		list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}
		if s.hold || !s.isEvicted() {
			list.Items = []corev1.Pod{s.pod}
		}
		s.write(w, http.StatusOK, list)
	case r.URL.Path == "/api/v1/namespaces/ns/pods/p" && r.Method == http.MethodGet:
		s.write(w, http.StatusOK, &s.pod)
	case r.URL.Path == "/api/v1/namespaces/ns/pods/p/eviction" && r.Method == http.MethodPost:
		s.evict(w, r)
	case r.URL.Path == "/api/v1/namespaces/ns/pods/p" && r.Method == http.MethodDelete:
		var opts metav1.DeleteOptions
		body, err := io.ReadAll(r.Body)
		if err == nil {
			// client-go may send it as protobuf.
			_, _, err = scheme.Codecs.UniversalDeserializer().Decode(body, nil, &opts)
		}
		if err != nil {
			s.t.Errorf("decoding delete options: %v", err)
		}
		s.mu.Lock()
		s.deletes = append(s.deletes, opts)
		s.mu.Unlock()
		s.accept()
		s.write(w, http.StatusOK, &s.pod)
	default:
		http.NotFound(w, r)
	}
}

func (s *apiServer) evict(w http.ResponseWriter, r *http.Request) {
	var ev policyv1.Eviction
	if err := json.NewDecoder(r.Body).Decode(&ev); err != nil {
		s.t.Errorf("decoding eviction: %v", err)
	}
	s.mu.Lock()
	n := len(s.evictions)
	s.evictions = append(s.evictions, ev)
	s.mu.Unlock()
	if n < len(s.script) {
		a := s.script[n]
		a.status.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
		if a.retryAfter != "" {
			w.Header().Set("Retry-After", a.retryAfter)
		}
		s.write(w, a.code, a.status)
		return
	}
	s.accept()
	s.write(w, http.StatusCreated, &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess})
}

// accept records that the pod is on its way out.
func (s *apiServer) accept() {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.evicted:
	default:
		close(s.evicted)
	}
}

func (s *apiServer) isEvicted() bool {
	select {
	case <-s.evicted:
		return true
	default:
		return false
	}
}

// watch streams the pod's deletion once it is evicted, then holds the
// connection until the client goes.
func (s *apiServer) watch(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.watches++
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	if s.closeWatches {
		return
	}
	select {
	case <-s.evicted:
		if s.hold {
			break
		}
		gone := s.pod.DeepCopy()
		gone.ResourceVersion = "2"
		body, _ := json.Marshal(gone)
		fmt.Fprintf(w, `{"type":"DELETED","object":%s}`+"\n", body)
		w.(http.Flusher).Flush()
	case <-r.Context().Done():
		return
	}
	<-r.Context().Done()
}

func (s *apiServer) write(w http.ResponseWriter, code int, obj any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	if err := json.NewEncoder(w).Encode(obj); err != nil {
		s.t.Errorf("encoding answer: %v", err)
	}
}

func (s *apiServer) graces() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int64
	for _, ev := range s.evictions {
		g := int64(-1)
		if ev.DeleteOptions != nil && ev.DeleteOptions.GracePeriodSeconds != nil {
			g = *ev.DeleteOptions.GracePeriodSeconds
		}
		out = append(out, g)
	}
	return out
}

func budgetRefusal(retryAfter int32) *metav1.Status {
	return &metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusTooManyRequests, Reason: metav1.StatusReasonTooManyRequests,
		Message: "Cannot evict pod as it would violate the pod's disruption budget.",
		Details: &metav1.StatusDetails{RetryAfterSeconds: retryAfter, Causes: []metav1.StatusCause{{
			Type: policyv1.DisruptionBudgetCause, Message: "The disruption budget b is still being processed by the server.",
		}}},
	}
}

func TestGraceIsComputedAtEachSend(t *testing.T) {
	t.Parallel() // waits on real time; in parallel, the package's short tests stay short
	// The server asks to come back in a second, as for a budget whose
	// status is behind: the retry must carry the grace left by then.
	s, client := newAPIServer(t, answer{code: http.StatusTooManyRequests, retryAfter: "1", status: budgetRefusal(1)})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	deadline := time.Now().Add(60 * time.Second)
	rep, err := drain.New(client, drain.DefaultConfig(), nil).Run(ctx, drain.Request{Node: "n1", Kind: "spot-interruption", Evict: true, Deadline: deadline})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	g := s.graces()
	if len(g) != 2 || g[1] >= g[0] || g[0] < 0 {
		t.Errorf("eviction graces sent = %v, want two, the second shorter than the first", g)
	}
	if !rep.Done || strings.Join(rep.Evicted, ",") != "ns/p" {
		t.Errorf("report = %+v, want ns/p evicted and done", rep)
	}
}

func TestRetryAfterIsBoundedByTheDeadline(t *testing.T) {
	t.Parallel() // waits on real time; in parallel, the package's short tests stay short
	// Throttled with a 10 s Retry-After and a deadline 2 s away: one
	// request, then the Run stops at its deadline instead of sleeping
	// past it and re-sending.
	throttled := answer{code: http.StatusTooManyRequests, retryAfter: "10", status: &metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusTooManyRequests, Reason: metav1.StatusReasonTooManyRequests,
		Message: "Too many requests, please try again later.", Details: &metav1.StatusDetails{RetryAfterSeconds: 10},
	}}
	s, client := newAPIServer(t, throttled, throttled, throttled, throttled)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := drain.DefaultConfig()
	cfg.DeadlineDelete = false
	rep, err := drain.New(client, cfg, nil).Run(ctx, drain.Request{Node: "n1", Kind: "spot-interruption", Evict: true, Deadline: time.Now().Add(2 * time.Second)})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if n := len(s.graces()); n != 1 {
		t.Errorf("%d eviction requests, want 1: the server asked for 10 s and the deadline came first", n)
	}
	if rep.Done || strings.Join(rep.Pending, ",") != "ns/p" || ctx.Err() != nil {
		t.Errorf("report = %+v (context %v), want ns/p pending at the deadline", rep, ctx.Err())
	}
}

func TestConflictWithTheSamePodRetries(t *testing.T) {
	t.Parallel() // waits on real time; in parallel, the package's short tests stay short
	// A 409 is not proof the pod was replaced: the GET shows the same UID,
	// so the eviction is sent again.
	conflict := answer{code: http.StatusConflict, status: &metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusConflict, Reason: metav1.StatusReasonConflict,
		Message: `Operation cannot be fulfilled on pods "p": the object has been modified`,
	}}
	s, client := newAPIServer(t, conflict)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rep, err := drain.New(client, drain.DefaultConfig(), nil).Run(ctx, drain.Request{Node: "n1", Kind: "asg-lifecycle", Evict: true})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if n := len(s.graces()); n != 2 {
		t.Errorf("%d eviction requests, want 2", n)
	}
	if !rep.Done || strings.Join(rep.Evicted, ",") != "ns/p" {
		t.Errorf("report = %+v, want ns/p evicted and done", rep)
	}
}
