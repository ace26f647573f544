package notify

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/notify/webhook"
)

var (
	t0 = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	t1 = t0.Add(time.Minute)
	t2 = t0.Add(2 * time.Minute)
)

// A message speaks of the task's interruption with the earliest
// deadline; without any deadline, of its first.
func TestFirstInterruption(t *testing.T) {
	tests := []struct {
		name string
		ins  []event.Interruption
		want string
	}{
		{"none", nil, ""},
		{"one", []event.Interruption{{EventID: "a"}}, "a"},
		{"no deadlines", []event.Interruption{{EventID: "a"}, {EventID: "b"}}, "a"},
		{"later one has a deadline", []event.Interruption{{EventID: "a"}, {EventID: "b", Deadline: t1}}, "b"},
		{"earlier deadline later", []event.Interruption{{EventID: "a", Deadline: t2}, {EventID: "b", Deadline: t1}, {EventID: "c"}}, "b"},
		{"earliest first", []event.Interruption{{EventID: "a", Deadline: t1}, {EventID: "b", Deadline: t2}}, "a"},
		{"same deadline", []event.Interruption{{EventID: "a", Deadline: t1}, {EventID: "b", Deadline: t1}}, "a"},
	}
	for _, tt := range tests {
		if got := first(handler.Task{Interruptions: tt.ins}); got.EventID != tt.want {
			t.Errorf("%s: first = %q, want %q", tt.name, got.EventID, tt.want)
		}
	}
}

func TestPlainMessage(t *testing.T) {
	tk := handler.Task{InstanceID: "i-1", Interruptions: []event.Interruption{{Kind: event.KindRebalanceRecommendation}}}
	got := plainMessage(tk, handler.Result{Status: handler.StatusRetry, Node: "n1", Reason: "blocked"}, "prod", 2500*time.Microsecond)
	want := "Drainpipe: rebalance-recommendation on instance i-1, node n1 (cluster prod) — not finished, will retry in 3ms: blocked"
	if got != want {
		t.Errorf("plainMessage\n got %q\nwant %q", got, want)
	}
}

func TestTemplateData(t *testing.T) {
	tk := handler.Task{InstanceID: "i-1", Interruptions: []event.Interruption{{Kind: event.KindASGLifecycle, EventID: "ev-2",
		Time: t0, End: t2, State: "terminating", Lifecycle: &event.Lifecycle{ASG: "workers"}}}}
	got := TemplateData(tk, handler.Result{Status: handler.StatusRetry, Node: "n1", Reason: "blocked"}, "prod", time.Second)
	text := "Drainpipe: asg-lifecycle on instance i-1, node n1 (cluster prod) — not finished, will retry in 1s: blocked (event ev-2)"
	want := webhook.Data{EventID: "ev-2", Kind: "asg-lifecycle", Monitor: "SQS_MONITOR", Description: text, State: "terminating",
		NodeName: "n1", InstanceID: "i-1", AutoScalingGroupName: "workers", StartTime: t0, EndTime: t2,
		Cluster: "prod", Status: "retry", Reason: "blocked", Text: text}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("TemplateData (-want +got):\n%s", diff)
	}
	tk.Interruptions[0].Deadline, tk.Interruptions[0].Lifecycle = t1, nil
	got = TemplateData(tk, handler.Result{Status: handler.StatusDone, Node: "n1"}, "prod", time.Second)
	if !got.StartTime.Equal(t1) || got.Status != "done" || got.AutoScalingGroupName != "" {
		t.Errorf("TemplateData with a deadline: start %v, status %q, group %q; want the deadline, done, none", got.StartTime, got.Status, got.AutoScalingGroupName)
	}
}

// statusServer answers every request with code.
func statusServer(t *testing.T, code int) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if code >= 300 && code < 400 {
			w.Header().Set("Location", "http://127.0.0.1:1/elsewhere")
		}
		w.WriteHeader(code)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// Any 2xx is delivered; anything else, a redirect included (a webhook
// does not send us elsewhere), is a failure naming the status.
func TestWebhookStatus(t *testing.T) {
	for code, ok := range map[int]bool{200: true, 204: true, 299: true, 300: false, 302: false, 404: false, 503: false} {
		err := New(fixedURL(statusServer(t, code)), Options{}).Send(context.Background(), "x")
		if (err == nil) != ok {
			t.Errorf("status %d: Send error %v, want ok=%v", code, err, ok)
		}
		if err != nil && !strings.Contains(err.Error(), http.StatusText(code)) {
			t.Errorf("status %d: error %q does not name the status", code, err)
		}
	}
}

type failingSource struct{}

func (failingSource) URL(context.Context) (*neturl.URL, error) { return nil, errors.New("no secret") }

func TestSendFailures(t *testing.T) {
	if err := New(failingSource{}, Options{}).Send(context.Background(), "x"); err == nil || err.Error() != "no secret" {
		t.Errorf("Send with a failing source: %v, want its error", err)
	}
	n := New(badURL{}, Options{})
	if err := n.Send(context.Background(), "x"); err == nil || !strings.Contains(err.Error(), "building the webhook request") {
		t.Errorf("Send to a URL no request takes: %v", err)
	}
}

// badURL gives a URL that http.NewRequest refuses.
type badURL struct{}

func (badURL) URL(context.Context) (*neturl.URL, error) {
	return &neturl.URL{Scheme: "https", Host: "bad host\x7f"}, nil
}

// A notification is bounded by Options.Timeout, its own by default.
func TestSendTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	n := New(fixedURL(srv.URL), Options{Timeout: 20 * time.Millisecond, Client: srv.Client()})
	if err := n.Send(context.Background(), "x"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Send to a webhook that never answers: %v, want the deadline", err)
	}
	d := New(fixedURL(srv.URL), Options{Timeout: -1})
	if d.opts.Timeout != DefaultTimeout || d.opts.Client.Timeout != DefaultTimeout {
		t.Errorf("a negative timeout became %v (client %v), want %v", d.opts.Timeout, d.opts.Client.Timeout, DefaultTimeout)
	}
	if d := New(fixedURL(srv.URL), Options{Timeout: time.Second}); d.opts.Timeout != time.Second {
		t.Errorf("timeout %v, want the given second", d.opts.Timeout)
	}
}

// Only a task that acted on a node it drained is told, once; a failure is
// logged with the instance and node, and counted.
func TestRecordTaskChoosesItsTasks(t *testing.T) {
	rcv := &receiver{status: http.StatusOK}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	n := New(fixedURL(srv.URL), Options{})
	tk, res := task()
	n.RecordTask(tk, res, 0) // no drain recorded
	n.RecordDrain("prod", drain.Report{Node: "node-a"})
	ignored := res
	ignored.Status = handler.StatusIgnored
	n.RecordTask(tk, ignored, 0) // the drain is forgotten with it
	n.RecordTask(tk, res, 0)
	n.RecordDrain("prod", drain.Report{})
	n.RecordTask(tk, handler.Result{Status: handler.StatusDone}, 0) // no node
	n.Flush(context.Background())
	if len(rcv.texts) != 0 {
		t.Errorf("messages %q, want none", rcv.texts)
	}

	var logs bytes.Buffer
	var errs []error
	n = New(fixedURL(statusServer(t, 500)), Options{Log: slog.New(slog.NewTextHandler(&logs, nil)),
		OnError: func(err error) { errs = append(errs, err) }})
	n.RecordDrain("prod", drain.Report{Node: "node-a"})
	n.RecordTask(tk, res, 0)
	n.Flush(context.Background())
	if len(errs) != 1 || !strings.Contains(logs.String(), "instance_id=i-0abc") || !strings.Contains(logs.String(), "node=node-a") {
		t.Errorf("errors %v, log %q; want one failure, logged with instance and node", errs, logs.String())
	}
}

// With a template, RecordTask sends the template's body, its text not
// Slack-escaped (the template decides).
func TestRecordTaskWithTemplate(t *testing.T) {
	rcv := &rawReceiver{}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	tmpl, err := webhook.ParseTemplate("{{ .Status }}: {{ .Reason }} | {{ .Text }}")
	if err != nil {
		t.Fatal(err)
	}
	n := New(fixedURL(srv.URL), Options{Template: tmpl})
	tk, res := task()
	res.Reason = "a <b>"
	n.RecordDrain("prod", drain.Report{Node: "node-a"})
	n.RecordTask(tk, res, 0)
	n.Flush(context.Background())
	want := "done: a <b> | Drainpipe: spot-interruption on instance i-0abc, node node-a (cluster prod), " +
		"deadline 2026-11-20T10:02:00Z — done in 0s: a <b> (event ev-1)"
	if len(rcv.bodies) != 1 || rcv.bodies[0] != want {
		t.Errorf("bodies %q, want %q", rcv.bodies, want)
	}
}

// Without a template, the text sent is Slack-escaped.
func TestRecordTaskEscapesTheText(t *testing.T) {
	rcv := &receiver{status: http.StatusOK}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	n := New(fixedURL(srv.URL), Options{})
	tk, res := task()
	res.Reason = "a <b>"
	n.RecordDrain("prod", drain.Report{Node: "node-a"})
	n.RecordTask(tk, res, 0)
	n.Flush(context.Background())
	if len(rcv.texts) != 1 || !strings.Contains(rcv.texts[0], "a &lt;b&gt;") {
		t.Errorf("texts %q, want the reason escaped", rcv.texts)
	}
}

// Headers of the options are sent; the secret's override them.
func TestHeadersOrder(t *testing.T) {
	rcv := &rawReceiver{}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	src, err := SecretValue(`{"url":"` + srv.URL + `","headers":{"Authorization":"secret"}}`)
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{"Authorization": {"plain"}, "X-Team": {"a"}}
	if err := New(src, Options{Headers: h}).Send(context.Background(), "x"); err != nil {
		t.Fatal(err)
	}
	got := rcv.headers[0]
	if got.Get("Authorization") != "secret" || got.Get("X-Team") != "a" || got.Get("Content-Type") != "application/json" {
		t.Errorf("headers %v", got)
	}
}

func TestRecordHookSendsNothing(t *testing.T) {
	rcv := &receiver{status: http.StatusOK}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	n := New(fixedURL(srv.URL), Options{})
	n.RecordHook("complete", event.Lifecycle{}, true, nil)
	n.Flush(context.Background())
	if len(rcv.texts) != 0 {
		t.Errorf("messages %q for a hook call", rcv.texts)
	}
}
