package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// nthTemplate is aws-node-termination-handler's default webhookTemplate.
const nthTemplate = `{"text":"[NTH][Instance Interruption] EventID: {{ .EventID }} - Kind: {{ .Kind }} - Instance: {{ .InstanceID }} - Node: {{ .NodeName }} - Description: {{ .Description }} - Start Time: {{ .StartTime }}"}`

// TestWebhookRender renders the sample through NTH's template with a
// reason a failed drain gives: the body stays JSON; a template the
// function would refuse exits 2 with the reason.
func TestWebhookRender(t *testing.T) {
	env := map[string]string{"DRAINPIPE_WEBHOOK_TEMPLATE": strings.Replace(nthTemplate, "{{ .Description }}", "{{ .Reason }}", 1)}
	reason := `evicting "db-0": Cannot evict pod as it would violate the pod's disruption budget.`
	code, out, stderr := runCLI(t, env, "", "webhook", "render", "--reason", reason)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var body struct{ Text string }
	if err := json.Unmarshal([]byte(out), &body); err != nil || !strings.Contains(body.Text, reason) {
		t.Errorf("rendered %s (%v): want JSON carrying the reason", out, err)
	}
	env["DRAINPIPE_WEBHOOK_TEMPLATE"] = `{"text": "{{ .Nodename }}"}`
	if code, _, stderr := runCLI(t, env, "", "webhook", "render"); code != exitUsage || !strings.Contains(stderr, ".Nodename") {
		t.Errorf("a misspelt variable: exit %d, %q; want 2 naming it", code, stderr)
	}
}

// TestWebhookSend posts the test message to a webhook on 127.0.0.1 with a
// secret's value from a file, its headers included, and reports a
// refusal.
func TestWebhookSend(t *testing.T) {
	var got []string
	var auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got, auth = append(got, string(b)), r.Header.Get("Authorization")
		if strings.HasSuffix(r.URL.Path, "/refuse") {
			w.WriteHeader(http.StatusForbidden)
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret.json")
	if err := os.WriteFile(secret, []byte(`{"url": "`+srv.URL+`/hook", "headers": {"Authorization": "Bearer x"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLI(t, nil, "", "webhook", "send", "--secret-file", secret)
	if code != exitOK || !strings.Contains(out, "accepted") {
		t.Fatalf("exit %d: %s%s", code, out, stderr)
	}
	if len(got) != 1 || !strings.Contains(got[0], "a test message from drainpipe webhook send") || auth != "Bearer x" {
		t.Errorf("received %q with Authorization %q", got, auth)
	}
	if err := os.WriteFile(secret, []byte(srv.URL+"/refuse"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI(t, nil, "", "webhook", "send", "--secret-file", secret); code != exitFail || !strings.Contains(stderr, "403") {
		t.Errorf("a refusing webhook: exit %d, %q; want 1 with the status", code, stderr)
	}
	if code, _, _ := runCLI(t, nil, "", "webhook", "send"); code != exitUsage {
		t.Errorf("send without a secret: exit %d, want %d", code, exitUsage)
	}
}
