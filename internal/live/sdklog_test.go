package live

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/aws/smithy-go/logging"
)

// The SDK's warnings come out as JSON log lines at level WARN.
func TestSDKLogger(t *testing.T) {
	var buf bytes.Buffer
	l := SDKLogger(slog.New(slog.NewJSONHandler(&buf, nil)))
	l.Logf(logging.Warn, "Response has no supported checksum. Not validating response payload: %s", "x")
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("not a JSON line: %q: %v", buf.String(), err)
	}
	if line["level"] != "WARN" || line["source"] != "aws-sdk" || line["msg"] != "Response has no supported checksum. Not validating response payload: x" {
		t.Errorf("line = %v", line)
	}
}

// Off EC2 the SDK's fallback to IMDSv1 is the normal course: it is kept
// below the default level.
func TestSDKLoggerIMDSFallbackIsDebug(t *testing.T) {
	var buf bytes.Buffer
	l := SDKLogger(slog.New(slog.NewJSONHandler(&buf, nil)))
	l.Logf(logging.Warn, "falling back to IMDSv1: %s", "operation error ec2imds: getToken")
	if buf.Len() != 0 {
		t.Errorf("logged at the default level: %q", buf.String())
	}
}
