package lambdart

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// lineLog collects the process's output as lines, from stdout and stderr
// alike, and wakes whoever waits for a line.
type lineLog struct {
	tee io.Writer

	mu      sync.Mutex
	lines   []string
	changed chan struct{} // closed and replaced on every new line
	streams []*lineWriter
}

func newLineLog(tee io.Writer) *lineLog {
	return &lineLog{tee: tee, changed: make(chan struct{})}
}

// writer returns a writer for one stream; each keeps its own partial line.
func (l *lineLog) writer() io.Writer {
	w := &lineWriter{log: l}
	l.mu.Lock()
	l.streams = append(l.streams, w)
	l.mu.Unlock()
	return w
}

func (l *lineLog) add(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, line)
	close(l.changed)
	l.changed = make(chan struct{})
}

// flush keeps a last line that had no newline.
func (l *lineLog) flush() {
	l.mu.Lock()
	streams := append([]*lineWriter(nil), l.streams...)
	l.mu.Unlock()
	for _, s := range streams {
		s.flush()
	}
}

func (l *lineLog) snapshot() ([]string, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...), l.changed
}

type lineWriter struct {
	log *lineLog
	mu  sync.Mutex
	buf []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	if w.log.tee != nil {
		_, _ = w.log.tee.Write(p) // a failing tee must not stop the process
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.log.add(string(bytes.TrimSuffix(w.buf[:i], []byte("\r"))))
		w.buf = w.buf[i+1:]
	}
	return len(p), nil
}

func (w *lineWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.log.add(string(w.buf))
		w.buf = nil
	}
}

// Logs returns every line the bootstrap printed so far, stdout and stderr
// interleaved in arrival order.
func (rt *Runtime) Logs() []string {
	lines, _ := rt.logs.snapshot()
	return lines
}

// Records returns the lines that are JSON objects (slog's JSON handler
// output), decoded, in order.
func (rt *Runtime) Records() []map[string]any {
	var recs []map[string]any
	for _, l := range rt.Logs() {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil {
			recs = append(recs, m)
		}
	}
	return recs
}

// WaitLog waits for a line that satisfies match and returns it, looking at
// lines already printed first. It gives up when ctx ends or the process has
// exited and printed everything without a match.
func (rt *Runtime) WaitLog(ctx context.Context, match func(line string) bool) (string, error) {
	seen := 0
	for {
		lines, changed := rt.logs.snapshot()
		for _, l := range lines[seen:] {
			if match(l) {
				return l, nil
			}
		}
		seen = len(lines)
		select {
		case <-changed:
		case <-rt.exited:
			// The process's output is complete once exited is closed.
			if lines, _ := rt.logs.snapshot(); len(lines) == seen {
				return "", fmt.Errorf("waiting for a log line: %w", rt.exitError())
			}
		case <-ctx.Done():
			return "", fmt.Errorf("waiting for a log line: %w", ctx.Err())
		}
	}
}
