package drain_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// reportWrites answers the drainer's report writes (a node PATCH carrying
// AnnotationReport) with fail's answer while it returns one, and keeps
// each write's context deadline.
type reportWrites struct {
	mu        sync.Mutex
	deadlines []time.Time
}

func (w *reportWrites) roundTrip(fail func(n int) *http.Response) func(*http.Request, http.RoundTripper) (*http.Response, error) {
	return func(r *http.Request, rt http.RoundTripper) (*http.Response, error) {
		if r.Method != http.MethodPatch || !strings.Contains(r.URL.Path, "/nodes/") || r.Body == nil {
			return rt.RoundTrip(r)
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if !bytes.Contains(body, []byte(drain.AnnotationReport)) {
			return rt.RoundTrip(r)
		}
		dl, _ := r.Context().Deadline()
		w.mu.Lock()
		w.deadlines = append(w.deadlines, dl)
		n := len(w.deadlines)
		w.mu.Unlock()
		if resp := fail(n); resp != nil {
			resp.Request = r
			return resp, nil
		}
		return rt.RoundTrip(r)
	}
}

func (w *reportWrites) seen() []time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Time(nil), w.deadlines...)
}

// timedOut is an API server's answer to a request it could not finish in
// time (a loaded server, a slow etcd).
func timedOut() *http.Response {
	return &http.Response{StatusCode: http.StatusGatewayTimeout, Status: "504 Gateway Timeout", Header: http.Header{},
		Body: io.NopCloser(strings.NewReader("")), ProtoMajor: 1, ProtoMinor: 1}
}

// reportScene is a node with one pod to drain.
func reportScene(t *testing.T) (*scene, *drain.Drainer, *corev1.Node) {
	s, d := newScene(t, drain.DefaultConfig())
	ctx, cancel := context.WithTimeout(t.Context(), runTimeout)
	defer cancel()
	n := s.env.Node(ctx, fixture.NodeOptions{})
	s.env.Pod(ctx, "web", fixture.BoundTo(n.Name), fixture.GracePeriod(0))
	return s, d, n
}

// The report's write is bounded by the time the invocation has left
// (Request.ReportBy), not by a fixed limit, and a failed write is tried
// once more: a slow node PATCH no longer loses the report that
// DrainBlockedAlarm and `drainpipe nodes` read.
func TestReportWriteHasTheInvocationsTimeAndASecondTry(t *testing.T) {
	s, d, n := reportScene(t)
	ctx, cancel := context.WithTimeout(t.Context(), runTimeout)
	defer cancel()
	var w reportWrites
	s.through(w.roundTrip(func(n int) *http.Response {
		if n == 1 {
			return timedOut()
		}
		return nil
	}))
	start := time.Now()
	by := start.Add(time.Minute)
	rep, err := d.Run(ctx, drain.Request{Node: n.Name, Kind: "asg-lifecycle", Evict: true, ReportBy: by})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if rep.ReportLost {
		t.Errorf("report lost after a single timed-out write, want it written on the second try")
	}
	seen := w.seen()
	if len(seen) != 2 {
		t.Fatalf("%d report writes, want 2 (one timed out, one more try)", len(seen))
	}
	if first := seen[0]; !first.After(start.Add(drain.DefaultReportTime)) || !first.Before(by) {
		t.Errorf("first write's deadline %s after the Run began, want between %s and ReportBy's %s",
			first.Sub(start), drain.DefaultReportTime, by.Sub(start))
	}
	if !seen[1].Equal(by) {
		t.Errorf("second write's deadline %s, want ReportBy %s", seen[1], by)
	}
	node, err := s.client.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading node: %v", err)
	}
	if sum, ok := drain.ReadSummary(node); !ok || sum.State != "done" {
		t.Errorf("node's report %+v (present %v), want the done report", sum, ok)
	}
}

// A report that cannot be written twice is said in the Run's report (the
// function counts it in a metric), and the Run itself still succeeds.
func TestLostReportWriteIsReported(t *testing.T) {
	s, d, n := reportScene(t)
	ctx, cancel := context.WithTimeout(t.Context(), runTimeout)
	defer cancel()
	var w reportWrites
	s.through(w.roundTrip(func(int) *http.Response { return timedOut() }))
	rep, err := d.Run(ctx, drain.Request{Node: n.Name, Kind: "asg-lifecycle", Evict: true, ReportBy: time.Now().Add(time.Minute)})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !rep.ReportLost {
		t.Errorf("ReportLost false after every report write failed")
	}
	if got := len(w.seen()); got != 2 {
		t.Errorf("%d report writes, want 2", got)
	}
}
