package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/drainpipe/drainpipe/test/lambdart"
)

// logsContain reports whether any line contains all of subs.
func logsContain(rt *lambdart.Runtime, subs ...string) bool {
	for _, l := range rt.Logs() {
		all := true
		for _, s := range subs {
			all = all && strings.Contains(l, s)
		}
		if all {
			return true
		}
	}
	return false
}

// settled waits for the "batch handled" line of the invocation that gave
// res. The answer comes over HTTP and the log lines through a pipe, so the
// harness can hold the one before the other; the handler prints that line
// after every record's line and before it answers, so once it is in, all
// the batch's lines are.
func settled(ctx context.Context, rt *lambdart.Runtime, res lambdart.Response) error {
	_, err := rt.WaitLog(ctx, func(line string) bool {
		var rec struct {
			Msg       string `json:"msg"`
			RequestID string `json:"request_id"`
		}
		return json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "batch handled" && rec.RequestID == res.RequestID
	})
	if err != nil {
		return fmt.Errorf("waiting for the log of invocation %s: %w", res.RequestID, err)
	}
	return nil
}

// logLine finds the first JSON log line whose fields include every entry
// of match (compared as printed, so 3 matches "3") and returns its time.
func logLine(t *testing.T, rt *lambdart.Runtime, match map[string]string) (map[string]any, time.Time, bool) {
	t.Helper()
	for _, rec := range rt.Records() {
		all := true
		for k, v := range match {
			all = all && fmt.Sprint(rec[k]) == v
		}
		if !all {
			continue
		}
		s, _ := rec["time"].(string)
		at, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatalf("log line %v: bad time: %v", rec, err)
		}
		return rec, at, true
	}
	return nil, time.Time{}, false
}
