package main

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/drainpipe/drainpipe/internal/event"
)

// samARN is the function ARN the SAM CLI's emulator gives every function.
const samARN = "arn:aws:lambda:us-east-1:012345678912:function:Function"

// TestEventKinds: every kind `drainpipe event` writes parses as the kind it
// names and, judged at once under the emulator's function ARN, is acted on
// (not stale, not rejected), bare and wrapped for SQS.
func TestEventKinds(t *testing.T) {
	want := map[string]event.Kind{
		"spot": event.KindSpotInterruption, "rebalance": event.KindRebalanceRecommendation,
		"state-change": event.KindStateChange, "health": event.KindScheduledChange,
		"capacity-reservation": event.KindCapacityReservationInterruption, "capacity-block": event.KindCapacityBlockExpiry,
		"asg-terminate": event.KindASGLifecycle, "asg-launch": event.KindASGLaunchLifecycle,
	}
	if len(want) != len(eventKinds) {
		t.Fatalf("the test knows %d kinds, the command %d", len(want), len(eventKinds))
	}
	for kind, wantKind := range want {
		t.Run(kind, func(t *testing.T) {
			body := makeOK(t, "event", kind)
			parsed, err := event.Parse([]byte(body))
			if err != nil || len(parsed.Interruptions) != 1 || parsed.Interruptions[0].Kind != wantKind {
				t.Fatalf("Parse: %+v, %v; want one %s", parsed, err, wantKind)
			}
			wrapped := makeOK(t, "event", kind, "--sqs")
			checkSQSEvent(t, wrapped, samRegion, samAccount)
			for _, input := range []string{body, wrapped} {
				code, out, stderr := runCLI(t, nil, input, "explain", "--function-arn", samARN)
				var e explanation
				if err := json.Unmarshal([]byte(out), &e); code != exitOK || err != nil {
					t.Fatalf("explain: exit %d, %v, output %q, stderr %q", code, err, out, stderr)
				}
				if e.Outcome != "act" || e.Kind != wantKind {
					t.Errorf("explain: outcome %q kind %q reason %q; want act on %s", e.Outcome, e.Kind, e.Reason, wantKind)
				}
			}
		})
	}
}

// makeOK runs the command and returns its output, failing on any other
// exit than 0.
func makeOK(t *testing.T, args ...string) string {
	t.Helper()
	code, out, stderr := runCLI(t, nil, "", args...)
	if code != exitOK || stderr != "" {
		t.Fatalf("%v: exit %d, stderr %q", args, code, stderr)
	}
	return out
}

// checkSQSEvent checks a one-record Lambda SQS event as the stack's queue
// in region and account would hand it over.
func checkSQSEvent(t *testing.T, raw, region, account string) events.SQSMessage {
	t.Helper()
	var ev events.SQSEvent
	if err := json.Unmarshal([]byte(raw), &ev); err != nil || len(ev.Records) != 1 {
		t.Fatalf("SQS event: %v, %d records; want one", err, len(ev.Records))
	}
	r := ev.Records[0]
	sum := md5.Sum([]byte(r.Body))
	if r.EventSource != "aws:sqs" || r.AWSRegion != region || r.EventSourceARN != "arn:aws:sqs:"+region+":"+account+":Drainpipe" ||
		r.Md5OfBody != hex.EncodeToString(sum[:]) || r.MessageId == "" || r.Attributes["ApproximateReceiveCount"] != "1" {
		t.Errorf("record = %+v; want aws:sqs from the Drainpipe queue of %s in %s, the body's MD5, a first delivery", r, account, region)
	}
	return r
}

// TestEventFlags: the account, region, instance, group, hook and token
// given are the event's, and --in sets the deadline.
func TestEventFlags(t *testing.T) {
	at := "2026-11-20T10:00:00Z"
	raw := makeOK(t, "event", "asg-terminate", "--sqs", "--account", "111122223333", "--region", "eu-west-1",
		"--instance", "i-0fedcba9876543210", "--group", "workers", "--hook", "drain",
		"--token", "6d1f2c3a-4b5e-4f60-8a7b-9c0d1e2f3a4b", "--at", at)
	r := checkSQSEvent(t, raw, "eu-west-1", "111122223333")
	parsed, err := event.Parse([]byte(r.Body))
	if err != nil {
		t.Fatal(err)
	}
	in := parsed.Interruptions[0]
	lc := in.Lifecycle
	if in.Account != "111122223333" || in.Region != "eu-west-1" || lc == nil || lc.ASG != "workers" || lc.Hook != "drain" ||
		lc.Token != "6d1f2c3a-4b5e-4f60-8a7b-9c0d1e2f3a4b" || lc.InstanceID != "i-0fedcba9876543210" {
		t.Errorf("interruption %+v lifecycle %+v: not the flags'", in, lc)
	}
	if got := r.Attributes["SentTimestamp"]; got != "1795168800000" {
		t.Errorf("SentTimestamp %s, want --at's 1795168800000", got)
	}
	// The event's own account and region pass the check under its ARN,
	// and another account's function rejects it.
	for arn, want := range map[string]string{
		"arn:aws:lambda:eu-west-1:111122223333:function:drainpipe": "act",
		samARN: "reject",
	} {
		code, out, _ := runCLI(t, nil, raw, "explain", "--now", at, "--function-arn", arn)
		if code != exitOK || !strings.Contains(out, `"outcome":"`+want+`"`) {
			t.Errorf("under %s: exit %d, %s; want %s", arn, code, out, want)
		}
	}

	deadlines := map[string]string{ // kind and --in: the deadline at --at
		"spot 30s":                 "2026-11-20T10:00:30Z",
		"state-change 2m":          "2026-11-20T10:02:00Z",
		"health 48h":               "2026-11-22T10:00:00Z",
		"capacity-reservation 90s": "2026-11-20T10:01:30Z",
		"capacity-block 10m":       "2026-11-20T10:10:00Z",
	}
	for spec, want := range deadlines {
		kind, in, _ := strings.Cut(spec, " ")
		body := makeOK(t, "event", kind, "--in", in, "--at", at)
		parsed, err := event.Parse([]byte(body))
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		if got := parsed.Interruptions[0].Deadline.Format(time.RFC3339); got != want {
			t.Errorf("%s: deadline %s, want %s", spec, got, want)
		}
	}
}

func TestEventUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"event"}, "want one KIND"},
		{[]string{"event", "spot", "rebalance"}, "want one KIND"},
		{[]string{"event", "meteor"}, `unknown KIND "meteor"`},
		{[]string{"event", "spot", "--in", "5m"}, "at most"},
		{[]string{"event", "rebalance", "--in", "5m"}, "has no deadline"},
		{[]string{"event", "state-change", "--state", "stopped", "--in", "1m"}, "has no deadline"},
		{[]string{"event", "spot", "--instance", "i-nothex"}, "not valid"},
		{[]string{"event", "state-change", "--state", "rebooting"}, "want one of"},
		{[]string{"event", "spot", "--account", "12"}, "not valid"},
		{[]string{"event", "asg-terminate", "--token", "short"}, "not valid"},
		{[]string{"event", "spot", "--at", "yesterday"}, "--at"},
		{[]string{"event", "spot", "--nope"}, "flag provided but not defined"},
	} {
		code, out, stderr := runCLI(t, nil, "", tc.args...)
		if code != exitUsage || out != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %d, nothing, and %q", tc.args, code, out, stderr, exitUsage, tc.want)
		}
	}
}

// TestSampleEventsAsOfTheirTime: every sample of test/events, replayed with
// --now as of its time, is acted on, except the two records of
// mixed-batch.json that show a rejection and an ignored test notification
// (docs/local-testing.md says so).
func TestSampleEventsAsOfTheirTime(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "test", "events", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		code, out, stderr := runCLI(t, nil, "", "explain", "--now", receivedAt(string(data)), f)
		if code != exitOK {
			t.Fatalf("%s: exit %d, %s", f, code, stderr)
		}
		other := map[string]int{}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var e explanation
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				t.Fatal(err)
			}
			if e.Outcome != "act" || strings.Contains(e.Reason, "stale") {
				other[e.Outcome]++
				t.Logf("%s: %s %s: %s", filepath.Base(f), e.MessageID, e.Outcome, e.Reason)
			}
		}
		want := map[string]int{}
		if filepath.Base(f) == "mixed-batch.json" {
			want = map[string]int{"reject": 1, "ignore": 1}
		}
		if !maps.Equal(other, want) {
			t.Errorf("%s: outcomes other than act %v, want %v", filepath.Base(f), other, want)
		}
	}
}
