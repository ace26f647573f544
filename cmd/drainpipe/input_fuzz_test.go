package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/internal/config"
)

// FuzzEventReaders feeds any bytes to the readers behind explain, run and
// dlq (a Lambda SQS event, receive-message output, bodies, NDJSON) and on
// through the function's handler with the offline actor. It checks: no
// panic; input with anything but blanks gives a message (nothing dropped);
// text that is not JSON is one message carrying it whole; every message
// gets a verdict, in the words explain prints, a refusal with its reason;
// and every verdict encodes as a JSON line.
func FuzzEventReaders(f *testing.F) {
	// The SQS events and the operator's inputs; the event package's targets
	// seed every body shape. A small seed keeps the start quick: this
	// binary holds the whole command, and fuzzing first runs every seed.
	for _, glob := range []string{"../../test/events/*.json", "testdata/*.json"} {
		files, err := filepath.Glob(glob)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	f.Add([]byte(`{"Messages":[{"MessageId":"m1","Body":"{}","Attributes":{"ApproximateReceiveCount":"3"}}]}` + "\n{}\nnot json"))
	cfg, err := config.Load(func(string) string { return "" })
	if err != nil {
		f.Fatal(err)
	}
	now := time.Date(2026, 11, 20, 10, 0, 30, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte) {
		msgs := sqsMessages(data, now)
		trimmed := bytes.TrimSpace(data)
		if len(trimmed) > 0 && len(msgs) == 0 {
			t.Fatalf("input %q gave no message", data)
		}
		// No JSON value starts with any other byte.
		notJSON := len(trimmed) > 0 && !bytes.ContainsAny(trimmed[:1], `{["-0123456789tfn`)
		if notJSON && (len(msgs) != 1 || msgs[0].Body != string(trimmed)) {
			t.Fatalf("text that is not JSON, %q: got %d messages, want one carrying it whole", data, len(msgs))
		}
		ids := make([]string, len(msgs))
		for i, m := range msgs {
			ids[i] = m.MessageId
		}
		verdicts := judge(context.Background(), msgs, cfg, now)
		if len(verdicts) < len(msgs) {
			t.Fatalf("%d messages, %d verdicts: each needs one", len(msgs), len(verdicts))
		}
		for _, v := range verdicts {
			switch {
			case !slices.Contains([]string{"act", "return", "ignore", "reject"}, v.Outcome):
				t.Fatalf("verdict %+v: outcome not one explain documents", v)
			case (v.Outcome == "reject" || v.Outcome == "ignore") && v.Reason == "":
				t.Fatalf("verdict %+v: %s without a reason", v, v.Outcome)
			case !slices.Contains(ids, v.MessageID):
				t.Fatalf("verdict %+v names no message read", v)
			}
			if _, err := json.Marshal(v); err != nil {
				t.Fatalf("verdict %+v does not encode: %v", v, err)
			}
		}
	})
}
