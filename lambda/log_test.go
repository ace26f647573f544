package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/aws/aws-lambda-go/lambdacontext"
)

func TestRequestIDHandler(t *testing.T) {
	var buf bytes.Buffer
	current := &invocation{}
	log := slog.New(requestIDHandler{slog.NewJSONHandler(&buf, nil), current}).With("component", "test")
	ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "req-123"})
	log.InfoContext(ctx, "hello")
	log.InfoContext(context.Background(), "outside an invocation")
	current.set("req-456")
	log.Info("during an invocation, without its context")

	dec := json.NewDecoder(&buf)
	var first, second map[string]any
	if err := dec.Decode(&first); err != nil {
		t.Fatal(err)
	}
	if err := dec.Decode(&second); err != nil {
		t.Fatal(err)
	}
	if first["request_id"] != "req-123" || first["component"] != "test" {
		t.Errorf("line in an invocation = %v, want request_id req-123 and the logger's attributes", first)
	}
	if _, ok := second["request_id"]; ok {
		t.Errorf("line outside an invocation = %v, want no request_id", second)
	}
	var third map[string]any
	if err := dec.Decode(&third); err != nil {
		t.Fatal(err)
	}
	if third["request_id"] != "req-456" {
		t.Errorf("line during an invocation without its context = %v, want request_id req-456", third)
	}
}

func TestWarnUnknownVariables(t *testing.T) {
	var buf bytes.Buffer
	warnUnknown(slog.New(slog.NewJSONHandler(&buf, nil)), []string{"DRAINPIPE_TAINT_EFECT=NoSchedule", "DRAINPIPE_CLUSTERS=prod", "HOME=/"})
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("want one JSON warning, got %q: %v", buf.String(), err)
	}
	if line["level"] != "WARN" || line["name"] != "DRAINPIPE_TAINT_EFECT" || line["closest"] != "DRAINPIPE_TAINT_EFFECT" {
		t.Errorf("warning = %v, want level WARN, name DRAINPIPE_TAINT_EFECT, closest DRAINPIPE_TAINT_EFFECT", line)
	}
}
