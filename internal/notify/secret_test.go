package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
)

// NewSecret reads through clients made from the function's AWS
// configuration, and names itself by ARN in logs, never by value.
func TestNewSecretReadsWithTheConfig(t *testing.T) {
	fake := newFakeAWS("https://hooks.example.test/secret-token")
	srv := httptest.NewServer(fake)
	defer srv.Close()
	for _, arn := range []string{secretARN, parameterARN} {
		s, err := NewSecret(arn, awsConfig(srv.URL))
		if err != nil {
			t.Fatal(err)
		}
		u, err := s.URL(context.Background())
		if err != nil || u.Host != "hooks.example.test" {
			t.Errorf("%s: URL = %v, %v", arn, u, err)
		}
		if x := s.Extras(); x.RoutingKey != "" || x.Headers != nil {
			t.Errorf("%s: extras %+v of a plain URL", arn, x)
		}
		var logs bytes.Buffer
		slog.New(slog.NewTextHandler(&logs, nil)).Info("x", "secret", s)
		if !strings.Contains(logs.String(), arn) || strings.Contains(logs.String(), "secret-token") {
			t.Errorf("log %q, want the ARN and not the value", logs.String())
		}
	}
	if _, err := NewSecret("https://hooks.example.test/x", awsConfig(srv.URL)); err == nil {
		t.Error("NewSecret accepted a URL for an ARN")
	}
	if _, err := NewSecretWith("arn:aws:s3:::bucket/key", nil, nil); err == nil {
		t.Error("NewSecretWith accepted an S3 ARN")
	}
}

// A secret or parameter without a string value is an error, not an
// empty URL.
func TestSecretWithoutAValue(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		switch r.Header.Get("X-Amz-Target") {
		case "secretsmanager.GetSecretValue":
			_ = json.NewEncoder(w).Encode(map[string]any{"ARN": secretARN, "SecretBinary": "aGVsbG8="})
		default:
			_ = json.NewEncoder(w).Encode(map[string]any{"Parameter": map[string]any{"Name": "/drainpipe/webhook"}})
		}
	}))
	defer srv.Close()
	cfg := awsConfig(srv.URL)
	for arn, want := range map[string]string{secretARN: "no string value", parameterARN: "no value"} {
		s, err := NewSecretWith(arn, secretsmanager.NewFromConfig(cfg), ssm.NewFromConfig(cfg))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.URL(context.Background()); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: URL error %v, want %q", arn, err, want)
		}
	}
}

func TestValidateARNParts(t *testing.T) {
	for arn, ok := range map[string]bool{
		"arn:aws:ssm:eu-west-1:123456789012:parameter/":             false,
		"arn:aws:ssm:eu-west-1:123456789012:parameter/x":            true,
		"arn:aws:secretsmanager:eu-west-1:123456789012:secret:x":    true,
		"arn:aws:secretsmanager::123456789012:secret:x":             false,
		"arn:aws:secretsmanager:eu-west-1::secret:x":                false,
		"arn:aws:secretsmanager:eu-west-1:123456789012:parameter/x": false,
		"arn:aws:ssm:eu-west-1:123456789012:secret:x":               false,
	} {
		if err := ValidateARN(arn); (err == nil) != ok {
			t.Errorf("ValidateARN(%q) = %v, want ok=%v", arn, err, ok)
		}
	}
}

func TestParseSecret(t *testing.T) {
	tests := []struct {
		raw, url, key string
		headers       http.Header
		ok            bool
	}{
		{raw: "  https://h.example/x  ", url: "https://h.example/x", ok: true},
		{raw: `{"url":"https://a.example","webhook_url":"https://b.example"}`, url: "https://a.example", ok: true},
		{raw: `{"url":"https://a.example","routingKey":"k1","routing_key":"k2"}`, url: "https://a.example", key: "k1", ok: true},
		{raw: `{"url":"https://a.example","routing_key":"k2"}`, url: "https://a.example", key: "k2", ok: true},
		{raw: `{"url":"https://a.example","headers":{"X-A":"1","Content-Type":"text/plain"}}`, url: "https://a.example",
			headers: http.Header{"X-A": {"1"}}, ok: true},
		{raw: `{"url":"https://a.example","headers":{}}`, url: "https://a.example", headers: http.Header{}, ok: true},
		{raw: "http://localhost:8080/x", url: "http://localhost:8080/x", ok: true},
		{raw: "http://[::1]:8080/x", url: "http://[::1]:8080/x", ok: true},
		{raw: "http://127.0.0.2/x", url: "http://127.0.0.2/x", ok: true},
		{raw: "http://10.0.0.1/x"},
		{raw: "ftp://h.example/x"},
		{raw: "/relative"},
		{raw: `{"webhook_url":""}`},
		{raw: "https://h.example/%zz"},
		{raw: `{"url":`},
	}
	for _, tt := range tests {
		u, x, err := parseSecret(tt.raw)
		if (err == nil) != tt.ok {
			t.Errorf("parseSecret(%q) error %v, want ok=%v", tt.raw, err, tt.ok)
			continue
		}
		if err != nil {
			continue
		}
		if u.String() != tt.url || x.RoutingKey != tt.key {
			t.Errorf("parseSecret(%q) = %v, key %q; want %v, key %q", tt.raw, u, x.RoutingKey, tt.url, tt.key)
		}
		if tt.headers != nil && (len(x.Headers) != len(tt.headers) || x.Headers.Get("X-A") != tt.headers.Get("X-A")) {
			t.Errorf("parseSecret(%q) headers %v, want %v", tt.raw, x.Headers, tt.headers)
		}
		if tt.headers == nil && x.Headers != nil {
			t.Errorf("parseSecret(%q) headers %v, want none", tt.raw, x.Headers)
		}
	}
	if _, err := SecretValue("http://10.0.0.1/x"); err == nil {
		t.Error("SecretValue accepted plain http to another host")
	}
}
