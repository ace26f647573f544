package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/drainpipe/drainpipe/internal/config"
	"github.com/drainpipe/drainpipe/internal/live"
	"github.com/drainpipe/drainpipe/internal/metrics"
	"github.com/drainpipe/drainpipe/test/awsfake"
)

// samRecipe finds the `drainpipe event` command of the `sam local invoke`
// recipe in docs/local-testing.md.
var samRecipe = regexp.MustCompile(`(?m)^go run \./cmd/drainpipe (event [^>\n]+?)\s*>\s*(\S+)\s*$\n^sam local invoke .* -e (\S+)`)

// TestSAMRecipe runs the event the documented `sam local invoke` recipe
// makes through the function's handler as the emulator invokes it: under
// its function ARN (account 012345678912, us-east-1), in dry run, with the
// environment the stack gives a dry-run deployment. The record must be
// admitted (not rejected or stale) and its instance looked up in EC2,
// which here does not know it.
func TestSAMRecipe(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "local-testing.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := samRecipe.FindStringSubmatch(string(doc))
	if m == nil || m[2] != m[3] {
		t.Fatalf("docs/local-testing.md has no `go run ./cmd/drainpipe event ... > FILE` line followed by `sam local invoke ... -e FILE`")
	}
	input := makeOK(t, strings.Fields(m[1])...)
	var batch events.SQSEvent
	if err := json.Unmarshal([]byte(input), &batch); err != nil || len(batch.Records) == 0 {
		t.Fatalf("the recipe's event is not a Lambda SQS event: %v", err)
	}

	env := map[string]string{ // what the stack sets with -c clusters=prod -c dryRun=true
		"DRAINPIPE_CLUSTERS": "prod", "DRAINPIPE_DRY_RUN": "true", "DRAINPIPE_MAX_RECEIVE_COUNT": "5",
		"DRAINPIPE_RETRY_DELAY": "30s", "DRAINPIPE_MAX_EVENT_AGE": "3600s", "DRAINPIPE_ACCEPT": "eventbridge",
	}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	// As lambda/main.go builds it in dry run: the live actors, reading
	// only (here from an EC2 that does not know the instance), no queue.
	fake := awsfake.New()
	defer fake.Close()
	acts, err := live.NewActors(cfg, fake.Config(), log, live.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := live.NewHandler(cfg, acts.Pipeline, acts.Sweep, log, metrics.New(io.Discard), nil)
	ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{InvokedFunctionArn: samARN})
	resp, err := h.Handle(ctx, batch)
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("Handle: %+v, %v; want no failure", resp, err)
	}
	t.Logf("the function's log:\n%s", logs.String())
	var handled int
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var l struct{ Msg, Outcome, Reason string }
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if l.Msg == "record handled" {
			handled++
			if l.Outcome != "ignored" || !strings.Contains(l.Reason, "instance not found in EC2") {
				t.Errorf("record handled: outcome %q reason %q; want ignored, instance not found in EC2", l.Outcome, l.Reason)
			}
		}
	}
	if handled != 1 {
		t.Errorf("%d 'record handled' lines, want 1:\n%s", handled, logs.String())
	}
	if len(fake.CallsTo("DescribeInstances")) != 1 {
		t.Errorf("the dry run made %d DescribeInstances calls, want 1", len(fake.CallsTo("DescribeInstances")))
	}
}
