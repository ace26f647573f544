package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/drainpipe/drainpipe/test/lambdart"
	"github.com/drainpipe/drainpipe/test/sandbox/fixture"
)

// emfDocs returns the bootstrap's CloudWatch embedded-metric documents that
// carry metric, in order.
func emfDocs(rt *lambdart.Runtime, metric string) []map[string]any {
	var docs []map[string]any
	for _, r := range rt.Records() {
		if _, ok := r["_aws"]; ok && r[metric] != nil {
			docs = append(docs, r)
		}
	}
	return docs
}

// onlyDoc is the single document carrying metric.
func onlyDoc(t *testing.T, rt *lambdart.Runtime, metric string) map[string]any {
	t.Helper()
	docs := emfDocs(rt, metric)
	if len(docs) != 1 {
		t.Fatalf("%d EMF documents with %s, want 1: %v", len(docs), metric, docs)
	}
	return docs[0]
}

// pick keeps the named fields of a document.
func pick(doc map[string]any, keys ...string) map[string]any {
	out := map[string]any{}
	for _, k := range keys {
		out[k] = doc[k]
	}
	return out
}

// nodeEvents lists Drainpipe's events on a node as `kubectl describe node`
// finds them, by reason.
func (l *live) nodeEvents(ctx context.Context, t *testing.T, node string) map[string]corev1.Event {
	t.Helper()
	events := l.k8s.Client.CoreV1().Events(metav1.NamespaceAll)
	ns, kind := "", "Node"
	sel := events.GetFieldSelector(&node, &ns, &kind, &node)
	list, err := events.List(ctx, metav1.ListOptions{FieldSelector: sel.String()})
	if err != nil {
		t.Fatalf("listing events: %v", err)
	}
	out := map[string]corev1.Event{}
	for _, e := range list.Items {
		if e.Source.Component == "drainpipe" {
			out[e.Reason] = e
		}
	}
	return out
}

// A spot warning drains a node: the metrics printed match what happened in
// the cluster, the node and pods carry events, and every log line has the
// invocation's request id.
func TestObservabilitySpotDrain(t *testing.T) {
	ctx := testContext(t)
	l := startLive(t)
	n := l.node(ctx, served)
	l.k8s.Deployment(ctx, "web", 3, fixture.PinnedTo(n.Name))
	l.k8s.WaitDeploymentReady(ctx, "web")
	pods := l.podsOn(ctx, t, n.Name)

	res := l.invoke(ctx, t, time.Minute, message{id: "spot-obs", body: spotWarning(t, fixture.InstanceID(n))})
	if diff := cmp.Diff([]string{}, failedIDs(batchResponse(t, res.Body))); diff != "" {
		t.Fatalf("batch item failures (-want +got):\n%s", diff)
	}
	if got := l.podsOn(ctx, t, n.Name); len(got) != 0 {
		t.Fatalf("pods left on %s: %v", n.Name, got)
	}

	rec := onlyDoc(t, l.rt, "Records")
	want := map[string]any{"Records": 1.0, "kind": "spot-interruption", "outcome": "done", "message_id": "spot-obs",
		"instance_id": fixture.InstanceID(n), "request_id": res.RequestID}
	if diff := cmp.Diff(want, pick(rec, "Records", "kind", "outcome", "message_id", "instance_id", "request_id")); diff != "" {
		t.Errorf("record metrics (-want +got):\n%s", diff)
	}
	if lat, ok := rec["QueueLatency"].(float64); !ok || lat < 0 || lat > 60_000 {
		t.Errorf("QueueLatency = %v, want milliseconds since the event's time", rec["QueueLatency"])
	}
	drain := onlyDoc(t, l.rt, "DrainDuration")
	want = map[string]any{"PodsEvicted": float64(len(pods)), "PodsBlocked": 0.0, "PodsTerminating": 0.0,
		"DrainsUnfinished": 0.0, "DeadlineHit": 0.0, "node": n.Name, "cluster": served, "kind": "spot-interruption",
		"outcome": "done", "request_id": res.RequestID}
	if diff := cmp.Diff(want, pick(drain, "PodsEvicted", "PodsBlocked", "PodsTerminating", "DrainsUnfinished",
		"DeadlineHit", "node", "cluster", "kind", "outcome", "request_id")); diff != "" {
		t.Errorf("drain metrics (-want +got):\n%s", diff)
	}
	if d, _ := drain["DrainDuration"].(float64); d <= 0 || d > float64(res.Duration.Milliseconds()+1) {
		t.Errorf("DrainDuration = %v ms, want within the invocation's %v", drain["DrainDuration"], res.Duration)
	}

	evs := l.nodeEvents(ctx, t, n.Name)
	if e, ok := evs["SpotInterruption"]; !ok || !strings.Contains(e.Message, "the instance goes at") {
		t.Errorf("node events %v: want SpotInterruption with the deadline", evs)
	}
	if _, ok := evs["Drained"]; !ok {
		t.Errorf("node events %v: want Drained", evs)
	}
	podEvents, err := l.k8s.Client.CoreV1().Events(l.k8s.Namespace).List(ctx, metav1.ListOptions{
		FieldSelector: fields.Set{"reason": "SpotInterruption", "source": "drainpipe"}.String()})
	if err != nil {
		t.Fatal(err)
	}
	// A drain racing a deadline alongside others (drains of earlier tests
	// still held in the shared sandbox) leaves its pod events out and says
	// how many in its node's Drained event.
	var leftOut int
	if m := regexp.MustCompile(`\((\d+) of their own events left out`).FindStringSubmatch(evs["Drained"].Message); m != nil {
		leftOut, _ = strconv.Atoi(m[1])
	}
	if len(podEvents.Items)+leftOut != len(pods) {
		t.Errorf("%d pod events and %d left out (%q), want one per evicted pod (%d)", len(podEvents.Items), leftOut,
			evs["Drained"].Message, len(pods))
	}

	for _, r := range l.rt.Records() {
		if _, emf := r["_aws"]; emf || r["msg"] == "started" || r["msg"] == nil {
			continue
		}
		if r["request_id"] != res.RequestID {
			t.Errorf("log line without the request id: %v", r)
		}
	}
}

// A drain that a PodDisruptionBudget holds past the invocation's budget
// says so: blocked pods counted, the drain unfinished, how long it has
// been blocked (DrainBlockedFor, what the stack's DrainBlockedAlarm
// watches), a DrainBlocked event on the node; every metric carries the
// deployment's stack dimension.
func TestObservabilityBlockedDrain(t *testing.T) {
	ctx := testContext(t)
	l := startLive(t, "DRAINPIPE_DEADLINE_RESERVE=2s", "DRAINPIPE_METRICS_STACK=e2e-stack")
	n := l.node(ctx, served)
	l.k8s.Deployment(ctx, "db", 2, fixture.PinnedTo(n.Name))
	l.k8s.WaitDeploymentReady(ctx, "db")
	l.k8s.PDB(ctx, "db", map[string]string{"app": "db"}, fixture.MinAvailable(2))

	res := l.invoke(ctx, t, 10*time.Second, message{id: "spot-blocked", body: spotWarning(t, fixture.InstanceID(n))})
	if diff := cmp.Diff([]string{"spot-blocked"}, failedIDs(batchResponse(t, res.Body))); diff != "" {
		t.Fatalf("batch item failures (-want +got):\n%s", diff)
	}
	drain := onlyDoc(t, l.rt, "DrainDuration")
	want := map[string]any{"PodsEvicted": 0.0, "PodsBlocked": 2.0, "DrainsUnfinished": 1.0, "DeadlineHit": 0.0, "outcome": "retry"}
	if diff := cmp.Diff(want, pick(drain, "PodsEvicted", "PodsBlocked", "DrainsUnfinished", "DeadlineHit", "outcome")); diff != "" {
		t.Errorf("drain metrics (-want +got):\n%s", diff)
	}
	// Blocked from the first refusal to the end of the run.
	if got, ok := drain["DrainBlockedFor"].(float64); !ok || got <= 0 {
		t.Errorf("DrainBlockedFor = %v, want the seconds the drain was blocked", drain["DrainBlockedFor"])
	}
	if drain["stack"] != "e2e-stack" {
		t.Errorf("drain document's stack = %v, want e2e-stack", drain["stack"])
	}
	if got := onlyDoc(t, l.rt, "Records")["outcome"]; got != "retry" {
		t.Errorf("record outcome %v, want retry", got)
	}
	if e, ok := l.nodeEvents(ctx, t, n.Name)["DrainBlocked"]; !ok || e.Type != corev1.EventTypeWarning {
		t.Errorf("no DrainBlocked warning on node %s", n.Name)
	}
}

// webhookScene serves the webhook secret (Secrets Manager's JSON protocol)
// and a webhook receiver answering status, both on 127.0.0.1.
type webhookScene struct {
	mu    sync.Mutex
	texts []string
	reads int
}

const webhookSecretARN = "arn:aws:secretsmanager:us-west-2:123456789012:secret:drainpipe/webhook-AbCdEf"

func newWebhookScene(t *testing.T, status int) (*webhookScene, []string) {
	t.Helper()
	s := &webhookScene{}
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m map[string]string
		if err := json.NewDecoder(r.Body).Decode(&m); err == nil {
			s.mu.Lock()
			s.texts = append(s.texts, m["text"])
			s.mu.Unlock()
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(hook.Close)
	secrets := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Amz-Target") != "secretsmanager.GetSecretValue" {
			http.Error(w, `{"__type":"UnknownOperationException"}`, http.StatusBadRequest)
			return
		}
		var in struct {
			SecretID string `json:"SecretId"`
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.SecretID != webhookSecretARN {
			// As Secrets Manager answers for any other secret.
			http.Error(w, `{"__type":"ResourceNotFoundException","message":"Secrets Manager can't find the specified secret."}`, http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.reads++
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		fmt.Fprintf(w, `{"ARN":%q,"Name":"drainpipe/webhook","SecretString":%q}`, webhookSecretARN, hook.URL+"/services/T0/B0/secret-token")
	}))
	t.Cleanup(secrets.Close)
	return s, []string{"DRAINPIPE_WEBHOOK_SECRET_ARN=" + webhookSecretARN, "AWS_ENDPOINT_URL_SECRETS_MANAGER=" + secrets.URL}
}

func (s *webhookScene) received() ([]string, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.texts...), s.reads
}

// The webhook gets one message per node handled; a failing webhook changes
// nothing but an error metric; the URL never reaches the logs.
func TestObservabilityWebhook(t *testing.T) {
	for _, tt := range []struct {
		name   string
		status int
	}{{"working", http.StatusOK}, {"failing", http.StatusInternalServerError}} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testContext(t)
			hook, env := newWebhookScene(t, tt.status)
			l := startLive(t, env...)
			nodes := l.nodes(ctx, 2, served)
			for i, n := range nodes {
				l.k8s.Deployment(ctx, fmt.Sprintf("web-%d", i), 1, fixture.PinnedTo(n.Name))
			}
			for i, n := range nodes {
				res := l.invoke(ctx, t, time.Minute, message{id: fmt.Sprintf("spot-%d", i), body: spotWarning(t, fixture.InstanceID(n))})
				if diff := cmp.Diff([]string{}, failedIDs(batchResponse(t, res.Body))); diff != "" {
					t.Errorf("batch item failures (-want +got):\n%s", diff)
				}
				if got := l.podsOn(ctx, t, n.Name); len(got) != 0 {
					t.Errorf("pods left on %s: %v", n.Name, got)
				}
			}
			texts, reads := hook.received()
			if len(texts) != len(nodes) || reads != 1 {
				t.Fatalf("webhook got %d messages and the secret was read %d times; want %d and 1 (cached): %q",
					len(texts), reads, len(nodes), texts)
			}
			for i, n := range nodes {
				if !strings.Contains(texts[i], n.Name) || !strings.Contains(texts[i], "spot-interruption") {
					t.Errorf("message %q does not name node %s and the interruption", texts[i], n.Name)
				}
			}
			errs := 0
			for _, d := range emfDocs(l.rt, "Errors") {
				if d["class"] == "webhook" {
					errs++
				}
			}
			if want := map[int]int{http.StatusOK: 0, http.StatusInternalServerError: len(nodes)}[tt.status]; errs != want {
				t.Errorf("%d webhook error metrics, want %d", errs, want)
			}
			if logsContain(l.rt, "secret-token") {
				t.Error("the webhook URL reached the logs")
			}
		})
	}
}
