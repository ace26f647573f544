package notify

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/internal/config"
	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/notify/webhook"
)

// nthDefault is aws-node-termination-handler's default webhookTemplate.
const nthDefault = `{"text":"[NTH][Instance Interruption] EventID: {{ .EventID }} - Kind: {{ .Kind }} - Instance: {{ .InstanceID }} - Node: {{ .NodeName }} - Description: {{ .Description }} - Start Time: {{ .StartTime }}"}`

// rawReceiver keeps each request's body and headers.
type rawReceiver struct {
	mu      sync.Mutex
	bodies  []string
	headers []http.Header
}

func (r *rawReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	b, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.bodies = append(r.bodies, string(b))
	r.headers = append(r.headers, req.Header.Clone())
	r.mu.Unlock()
}

func TestNTHDefaultTemplateAndHeaders(t *testing.T) {
	env := map[string]string{
		config.Prefix + "WEBHOOK_TEMPLATE": nthDefault,
		config.Prefix + "WEBHOOK_HEADERS":  `{"X-Team":"platform","Content-Type":"application/json; charset=utf-8"}`,
	}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := webhook.ParseTemplate(cfg.WebhookTemplate)
	if err != nil {
		t.Fatal(err)
	}
	rcv := &rawReceiver{}
	srv := httptest.NewServer(rcv) // listens on 127.0.0.1
	defer srv.Close()
	n := New(fixedURL(srv.URL+"/hook"), Options{Template: tmpl, Headers: cfg.WebhookHeaders,
		OnError: func(err error) { t.Errorf("OnError(%v)", err) }})
	tk, res := task()
	n.RecordDrain("prod", drain.Report{Node: "node-a"})
	n.RecordTask(tk, res, 1500*time.Millisecond)
	n.Flush(context.Background())
	if len(rcv.bodies) != 1 {
		t.Fatalf("received %d requests, want 1", len(rcv.bodies))
	}
	want := `{"text":"[NTH][Instance Interruption] EventID: ev-1 - Kind: spot-interruption - Instance: i-0abc - Node: node-a - Description: ` +
		`Drainpipe: spot-interruption on instance i-0abc, node node-a (cluster prod), deadline 2026-11-20T10:02:00Z — done in 1.5s: drained node node-a: 2 evicted (event ev-1)` +
		` - Start Time: 2026-11-20 10:02:00 +0000 UTC"}`
	if rcv.bodies[0] != want {
		t.Errorf("body\n got %s\nwant %s", rcv.bodies[0], want)
	}
	h := rcv.headers[0]
	if h.Get("X-Team") != "platform" || h.Get("Content-Type") != "application/json; charset=utf-8" {
		t.Errorf("headers %v: want X-Team and the given Content-Type", h)
	}
}

func TestDefaultHeaders(t *testing.T) {
	rcv := &rawReceiver{}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	if err := New(fixedURL(srv.URL), Options{}).Send(context.Background(), "x"); err != nil {
		t.Fatal(err)
	}
	if got := rcv.headers[0].Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type %q, want application/json", got)
	}
}

func TestBadTemplateOrHeadersRefusedAtLoad(t *testing.T) {
	for name, c := range map[string]struct{ key, value, want string }{
		"unparsable":   {"WEBHOOK_TEMPLATE", `{"text":"{{ .EventID }"}`, "parsing the template"},
		"unknown var":  {"WEBHOOK_TEMPLATE", `{"text":"{{ .InstanceId }}"}`, "InstanceId"},
		"action":       {"WEBHOOK_TEMPLATE", `{"text":"{{ range .Pods }}{{ . }}{{ end }}"}`, "only {{ .Field }}"},
		"not json":     {"WEBHOOK_HEADERS", `Content-Type: text/plain`, "JSON object"},
		"not a string": {"WEBHOOK_HEADERS", `{"X-N": 1}`, "JSON object"},
		"host":         {"WEBHOOK_HEADERS", `{"host":"evil.example"}`, `"host"`},
		"hop-by-hop":   {"WEBHOOK_HEADERS", `{"Connection":"close","Transfer-Encoding":"chunked"}`, "Transfer-Encoding"},
		"length":       {"WEBHOOK_HEADERS", `{"Content-Length":"1"}`, "Content-Length"},
		"bad name":     {"WEBHOOK_HEADERS", `{"X Team":"a"}`, "not a valid header name"},
		"line break":   {"WEBHOOK_HEADERS", `{"X-A":"a\r\nHost: b"}`, "line break"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := config.Load(func(k string) string {
				if k == config.Prefix+c.key {
					return c.value
				}
				return ""
			})
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.key) {
				t.Errorf("Load: %v, want an error naming %s and %q", err, c.key, c.want)
			}
		})
	}
}
