package drain

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"
)

// debugLog is a logger at debug level whose records read back as JSON
// objects.
type debugLog struct{ buf bytes.Buffer }

func (l *debugLog) logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(&l.buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// records returns the records logged with message msg.
func (l *debugLog) records(t *testing.T, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range bytes.Lines(l.buf.Bytes()) {
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

// The log of an attempt's outcome counts the attempts made, this one
// included, so an operator sees how many an eviction took; a transient
// error is kept as the pod's last, for the report, and a retry with no
// error (a wait before the next try) keeps the one before.
func TestSettleOutcomeLogsAttemptsAndKeepsTheLastError(t *testing.T) {
	tests := []struct {
		name     string
		out      outcome
		err      error
		attempt  int
		done     bool
		msg      string
		key      string // the attempts' count in the record logged as msg
		want     float64
		wantNote string
	}{
		{"evicted at the first attempt", outEvicted, nil, 0, true, "pod evicted", "attempts", 1, ""},
		{"evicted at the third", outEvicted, nil, 2, true, "pod evicted", "attempts", 3, ""},
		{"transient error", outRetry, errors.New("connection reset by peer"), 2, false, "eviction failed; retrying", "attempt", 3,
			"connection reset by peer"},
		{"retry without an error", outRetry, nil, 1, false, "", "", 0, "earlier error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l debugLog
			r := &run{d: New(nil, DefaultConfig(), nil), req: Request{Node: "n1"}, ctx: context.Background(), changed: make(chan struct{})}
			tg := &target{key: "ns/a", grace: 30, detail: "earlier error"}
			if done := r.settleOutcome(tg, tt.out, tt.err, 30, tt.attempt, l.logger()); done != tt.done {
				t.Errorf("settleOutcome done = %v, want %v", done, tt.done)
			}
			if tt.wantNote != "" && tg.detail != tt.wantNote {
				t.Errorf("pod's last error %q, want %q", tg.detail, tt.wantNote)
			}
			if tt.msg == "" {
				return
			}
			recs := l.records(t, tt.msg)
			if len(recs) != 1 || recs[0][tt.key] != tt.want {
				t.Errorf("logged %q: %v; want one record with %s = %v", tt.msg, recs, tt.key, tt.want)
			}
		})
	}
}
