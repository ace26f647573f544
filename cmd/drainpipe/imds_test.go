package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// TestNoPlainTextSDKLines runs the commands that load AWS credentials off
// EC2, with an instance metadata service that refuses them: every line
// they write to standard error is JSON, the SDK's IMDSv1 fallback warning
// included (it is noise off EC2 and is kept below the default level), and
// the missing credentials are said once.
func TestNoPlainTextSDKLines(t *testing.T) {
	imds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusForbidden)
	}))
	defer imds.Close()
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
		"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_WEB_IDENTITY_TOKEN_FILE"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	t.Setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.URL)
	t.Setenv("AWS_CONFIG_FILE", os.DevNull)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", os.DevNull)
	t.Setenv("AWS_REGION", "us-west-2")
	for _, args := range [][]string{
		{"dlq", "list", "--queue", "https://sqs.us-west-2.amazonaws.com/123456789012/q"},
		{"check", "-c", "clusters=prod"},
	} {
		var code int
		var stderr string
		process := captureStderr(t, func() { code, _, stderr = runCLI(t, nil, "", args...) })
		stderr = process + stderr
		if code != exitUsage || !strings.Contains(stderr, "no AWS credentials") {
			t.Errorf("%v: exit %d, stderr %q; want %d saying no AWS credentials", args, code, stderr, exitUsage)
		}
		for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
			if !strings.HasPrefix(line, "{") {
				t.Errorf("%v: a plain-text line on standard error: %q", args, line)
			}
		}
	}
}

// TestCheckContextBeforeConnecting: check's context is checked before any
// credential is looked for, so its mistakes are told without an account.
func TestCheckContextBeforeConnecting(t *testing.T) {
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_CONFIG_FILE", os.DevNull)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", os.DevNull)
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	code, _, stderr := runCLI(t, nil, "", "check", "-c", "clusters=prod", "-c", "actionSpot=bogus")
	if code != exitUsage || !strings.Contains(stderr, "actionSpot") || strings.Contains(stderr, "AWS") {
		t.Errorf("exit %d, stderr %q; want %d naming actionSpot, not the missing AWS configuration", code, stderr, exitUsage)
	}
}
