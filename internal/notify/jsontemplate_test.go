package notify

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/notify/webhook"
)

// TestJSONTemplateEscapesValues: NTH's own default template stays JSON
// when a reason holds what real ones do (quotes, a backslash, a line
// break), which is when a drain goes wrong and the message matters.
func TestJSONTemplateEscapesValues(t *testing.T) {
	tmpl, err := webhook.ParseTemplate(nthDefault)
	if err != nil {
		t.Fatal(err)
	}
	rcv := &rawReceiver{}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	n := New(fixedURL(srv.URL+"/hook"), Options{Template: tmpl, OnError: func(err error) { t.Errorf("OnError(%v)", err) }})
	tk, _ := task()
	reason := "evicting \"db-0\": Cannot evict pod as it would violate the pod's disruption budget.\n\tpath C:\\tmp"
	n.RecordDrain("prod", drain.Report{Node: "node-a"})
	n.RecordTask(tk, handler.Result{Status: handler.StatusRetry, Node: "node-a", Reason: reason}, time.Second)
	n.Flush(context.Background())
	if len(rcv.bodies) != 1 {
		t.Fatalf("received %d requests, want 1", len(rcv.bodies))
	}
	var got struct{ Text string }
	if err := json.Unmarshal([]byte(rcv.bodies[0]), &got); err != nil {
		t.Fatalf("body is not JSON (%v): %s", err, rcv.bodies[0])
	}
	if !strings.Contains(got.Text, reason) {
		t.Errorf("text %q does not carry the reason %q unchanged", got.Text, reason)
	}
}

// TestJSONTemplateRefusedWhenNotJSON: a template that starts as JSON but
// cannot render to JSON (a placeholder outside a string) is refused at
// start; a plain-text template is left as it is.
func TestJSONTemplateRefusedWhenNotJSON(t *testing.T) {
	if _, err := webhook.ParseTemplate(`{"pods": {{ .Pods }}}`); err == nil || !strings.Contains(err.Error(), "does not render to JSON") {
		t.Errorf("ParseTemplate of a placeholder outside a JSON string: %v, want refused", err)
	}
	tmpl, err := webhook.ParseTemplate(`node {{ .NodeName }}: "{{ .Reason }}"`)
	if err != nil {
		t.Fatal(err)
	}
	d := webhook.Sample()
	d.Reason = `a "quoted" reason`
	if b, _ := webhook.Render(tmpl, d); string(b) != `node ip-10-0-0-1.ec2.internal: "a "quoted" reason"` {
		t.Errorf("plain-text template rendered %s, want the values as they are", b)
	}
}

// TestSecretHeadersAndRoutingKey: headers and a routing key come from the
// secret's JSON object, not the plain environment, and reach the request
// and the template (PagerDuty Events v2's routing_key).
func TestSecretHeadersAndRoutingKey(t *testing.T) {
	rcv := &rawReceiver{}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	src, err := SecretValue(`{"url": "` + srv.URL + `/v2/enqueue", "routingKey": "R0UTING", "headers": {"Authorization": "Token t0p"}}`)
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := webhook.ParseTemplate(`{"routing_key": "{{ .RoutingKey }}", "event_action": "trigger", "payload": {"summary": "{{ .Text }}", "source": "{{ .NodeName }}", "severity": "warning"}}`)
	if err != nil {
		t.Fatal(err)
	}
	n := New(src, Options{Template: tmpl})
	if err := n.SendData(context.Background(), webhook.Sample()); err != nil {
		t.Fatal(err)
	}
	var got struct {
		RoutingKey string `json:"routing_key"`
	}
	if err := json.Unmarshal([]byte(rcv.bodies[0]), &got); err != nil || got.RoutingKey != "R0UTING" {
		t.Errorf("body %s: routing_key %q (%v), want R0UTING", rcv.bodies[0], got.RoutingKey, err)
	}
	if h := rcv.headers[0]; h.Get("Authorization") != "Token t0p" || h.Get("Content-Type") != "application/json" {
		t.Errorf("headers %v: want the secret's Authorization and JSON", h)
	}
	for _, bad := range []string{`{"url": "https://x.example", "headers": {"Host": "y"}}`, `{"url": "https://x.example", "headers": ["a"]}`} {
		if _, _, err := parseSecret(bad); err == nil {
			t.Errorf("parseSecret(%s) accepted bad headers", bad)
		}
	}
}
