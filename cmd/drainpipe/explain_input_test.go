package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// explainLines runs explain and decodes its lines.
func explainLines(t *testing.T, stdin string, args ...string) []explanation {
	t.Helper()
	code, out, stderr := runCLI(t, nil, stdin, append([]string{"explain"}, args...)...)
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var es []explanation
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var e explanation
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		es = append(es, e)
	}
	return es
}

// One verdict: replayed an hour and a half after its deadline, a spot
// warning is what the function calls it, stale, not "act".
func TestExplainStaleAsTheFunction(t *testing.T) {
	body := readBody(t, "eventbridge-spot-interruption.json")
	e := explainLines(t, body, "--now", "2026-11-20T11:32:00Z")[0]
	if e.Outcome != "ignore" || !strings.HasPrefix(e.Reason, "stale: ") {
		t.Errorf("outcome %q reason %q; want ignore, stale", e.Outcome, e.Reason)
	}
	// A redelivery resumes the drain: never stale.
	redelivered := `{"Messages":[{"MessageId":"m-2","ReceiptHandle":"h","Body":` + quote(t, body) +
		`,"Attributes":{"ApproximateReceiveCount":"2"}}]}`
	e = explainLines(t, redelivered, "--now", "2026-11-20T10:01:00Z")[0]
	if e.MessageID != "m-2" || e.Outcome != "act" {
		t.Errorf("receive-message output: %+v, want m-2 acted on", e)
	}
}

// NDJSON bodies are read one by one; a flag is never opened as a file.
func TestExplainNDJSONAndFlags(t *testing.T) {
	spot := strings.Join(strings.Fields(readBody(t, "eventbridge-spot-interruption.json")), " ")
	rebalance := strings.Join(strings.Fields(readBody(t, "eventbridge-rebalance-recommendation.json")), " ")
	es := explainLines(t, spot+"\n"+rebalance+"\n", "-", "--now", "2026-11-20T10:00:30Z")
	if len(es) != 2 || es[0].Kind != "spot-interruption" || es[1].Kind != "rebalance-recommendation" {
		t.Errorf("NDJSON: %+v, want a spot line and a rebalance line", es)
	}
	if code, _, stderr := runCLI(t, nil, "", "explain", "--nope"); code != exitUsage || strings.Contains(stderr, "open") {
		t.Errorf("explain --nope = %d, %q; want a usage error, no file opened", code, stderr)
	}
	if code, _, stderr := runCLI(t, nil, "", "explain", "--now", "yesterday"); code != exitUsage || !strings.Contains(stderr, "--now") {
		t.Errorf("explain --now yesterday = %d, %q; want a usage error", code, stderr)
	}
}

// With the function's ARN, an event from another account is rejected as
// the function would (SAM's emulator's account is not the samples').
func TestExplainFunctionARN(t *testing.T) {
	body := readBody(t, "eventbridge-spot-interruption.json")
	e := explainLines(t, body, "--now", "2026-11-20T10:00:30Z",
		"--function-arn", "arn:aws:lambda:us-east-1:012345678912:function:HelloWorldFunction")[0]
	if e.Outcome != "reject" {
		t.Errorf("foreign account: %+v, want rejected", e)
	}
}

func quote(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
