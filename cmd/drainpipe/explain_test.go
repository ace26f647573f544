package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/drainpipe/drainpipe/internal/event"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func runCLI(t *testing.T, env map[string]string, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	c := cli{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errOut, Getenv: func(k string) string { return env[k] }}
	code = run(context.Background(), c, args)
	return code, out.String(), errOut.String()
}

// TestExplainGolden explains every message body in the event package's
// testdata and a Lambda SQS event, and compares with the golden lines.
func TestExplainGolden(t *testing.T) {
	bodies, err := filepath.Glob(filepath.Join("..", "..", "internal", "event", "testdata", "*.json"))
	if err != nil || len(bodies) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	// Each input is judged 30 s after its own time, as if just received.
	var got string
	for _, f := range append(bodies, filepath.Join("testdata", "sqs-event.json")) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		code, out, stderr := runCLI(t, nil, "", "explain", "--now", receivedAt(string(data)), f)
		if code != exitOK || stderr != "" {
			t.Fatalf("%s: exit %d, stderr %q", f, code, stderr)
		}
		got += out
	}
	golden := filepath.Join("testdata", "explain.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(got, "\n")); diff != "" {
		t.Errorf("explain output (-want +got):\n%s", diff)
	}
	// Exactly the agreed fields, in every line.
	wantKeys := []string{"action", "deadline", "instances", "kind", "lifecycle", "messageId", "outcome", "reason"}
	for _, line := range strings.Split(strings.TrimSpace(got), "\n") {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if diff := cmp.Diff(wantKeys, slices.Sorted(maps.Keys(m))); diff != "" {
			t.Errorf("line %s: keys (-want +got):\n%s", line, diff)
		}
	}
}

// eventTime finds the first event time in a message or event (SNS
// envelopes escape the quotes).
var eventTime = regexp.MustCompile(`(?i)\\?"time\\?": ?\\?"([0-9TZ:.-]+)`)

// receivedAt is 30 s after the latest event time in data, RFC 3339: when
// the testdata's messages would have been received.
func receivedAt(data string) string {
	latest, _ := time.Parse(time.RFC3339, "2026-11-20T10:00:00Z")
	for _, m := range eventTime.FindAllStringSubmatch(data, -1) {
		if at, err := time.Parse(time.RFC3339, m[1]); err == nil && at.After(latest) {
			latest = at
		}
	}
	return latest.Add(30 * time.Second).Format(time.RFC3339)
}

func explainOne(t *testing.T, env map[string]string, stdin string) explanation {
	t.Helper()
	code, out, stderr := runCLI(t, env, stdin, "explain", "--now", receivedAt(stdin))
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var e explanation
	if err := json.Unmarshal([]byte(out), &e); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	return e
}

func readBody(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "internal", "event", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestExplainPolicy(t *testing.T) {
	tests := []struct {
		name, body  string
		env         map[string]string
		wantOutcome string
		wantAction  string
		wantReason  string
	}{
		{name: "rebalance by default", body: "eventbridge-rebalance-recommendation.json",
			wantOutcome: "act", wantAction: "cordon", wantReason: "DRAINPIPE_ACTION_REBALANCE"},
		{name: "rebalance turned off", body: "eventbridge-rebalance-recommendation.json",
			env:         map[string]string{"DRAINPIPE_ACTION_REBALANCE": "none"},
			wantOutcome: "ignore", wantAction: "none", wantReason: "policy: rebalance-recommendation is none (DRAINPIPE_ACTION_REBALANCE)"},
		{name: "spot cordon only", body: "eventbridge-spot-interruption.json",
			env:         map[string]string{"DRAINPIPE_ACTION_SPOT": "cordon"},
			wantOutcome: "act", wantAction: "cordon", wantReason: "DRAINPIPE_ACTION_SPOT"},
		{name: "hook with action none still completes", body: "asg-lifecycle-terminating.json",
			env:         map[string]string{"DRAINPIPE_ACTION_ASG_LIFECYCLE": "none"},
			wantOutcome: "ignore", wantAction: "none", wantReason: "hook my-asg/my-termination-hook completed with CONTINUE"},
		{name: "launch hook waits for Ready", body: "eventbridge-asg-launch-lifecycle.json",
			wantOutcome: "act", wantAction: "none", wantReason: "once the instance's node is Ready"},
		{name: "launch hook completed at once", body: "asg-lifecycle-launching.json",
			env:         map[string]string{"DRAINPIPE_LAUNCH_WAIT_READY": "false", "DRAINPIPE_ACTION_ASG_LIFECYCLE": "none"},
			wantOutcome: "act", wantAction: "none", wantReason: "at once (DRAINPIPE_LAUNCH_WAIT_READY=false)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := explainOne(t, tt.env, readBody(t, tt.body))
			if e.Outcome != tt.wantOutcome || string(e.Action) != tt.wantAction || !strings.Contains(e.Reason, tt.wantReason) {
				t.Errorf("got outcome %q action %q reason %q; want %q, %q and a reason mentioning %q",
					e.Outcome, e.Action, e.Reason, tt.wantOutcome, tt.wantAction, tt.wantReason)
			}
		})
	}
}

func TestExplainExitCodes(t *testing.T) {
	t.Run("rejected message is an answer", func(t *testing.T) {
		code, out, _ := runCLI(t, nil, "not json at all", "explain")
		if code != exitOK || !strings.Contains(out, `"outcome":"reject"`) {
			t.Errorf("exit %d, output %q; want 0 and a reject line", code, out)
		}
	})
	t.Run("missing file", func(t *testing.T) {
		body := filepath.Join("..", "..", "internal", "event", "testdata", "eventbridge-spot-interruption.json")
		code, out, stderr := runCLI(t, nil, "", "explain", filepath.Join(t.TempDir(), "missing.json"), body)
		if code != exitUsage || !strings.Contains(stderr, "missing.json") {
			t.Errorf("exit %d, stderr %q; want %d naming the file", code, stderr, exitUsage)
		}
		if !strings.Contains(out, "spot-interruption") {
			t.Errorf("output %q: the readable input was not explained", out)
		}
	})
	t.Run("bad configuration", func(t *testing.T) {
		code, _, stderr := runCLI(t, map[string]string{"DRAINPIPE_ACTION_SPOT": "explode"}, "{}", "explain")
		if code != exitUsage || !strings.Contains(stderr, "DRAINPIPE_ACTION_SPOT") {
			t.Errorf("exit %d, stderr %q; want %d naming the variable", code, stderr, exitUsage)
		}
	})
	t.Run("unknown command", func(t *testing.T) {
		if code, _, _ := runCLI(t, nil, "", "frobnicate"); code != exitUsage {
			t.Errorf("exit %d, want %d", code, exitUsage)
		}
	})
}

// TestExplainLaunchHook checks a launch hook's kind and lifecycle fields.
func TestExplainLaunchHook(t *testing.T) {
	e := explainOne(t, nil, readBody(t, "eventbridge-asg-launch-lifecycle.json"))
	if e.Kind != event.KindASGLaunchLifecycle || e.Lifecycle == nil || e.Lifecycle.Hook != "my-launch-hook" ||
		e.Lifecycle.ASG != "my-asg" || !slices.Equal(e.Instances, []string{"i-0123456789abcdef1"}) {
		t.Errorf("got kind %q lifecycle %+v instances %v; want asg-launch-lifecycle, my-asg/my-launch-hook, "+
			"i-0123456789abcdef1", e.Kind, e.Lifecycle, e.Instances)
	}
}
