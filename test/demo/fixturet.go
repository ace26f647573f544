package main

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// fixtureT lets the demo build its scene with the test fixtures outside
// `go test`. It implements the part of testing.TB that package fixture
// calls (Helper, Name, Cleanup, Errorf, Fatalf); the embedded TB is nil and
// only supplies the interface's unexported method. As in a test, a fatal
// failure ends the goroutine running the step; step reports it.
type fixtureT struct {
	testing.TB
	name string

	mu   sync.Mutex
	errs []string
}

func (t *fixtureT) Helper()      {}
func (t *fixtureT) Name() string { return t.name }

// Cleanup drops f: the demo discards the whole sandbox, which removes
// everything the fixtures made, faster than undoing it piece by piece.
func (t *fixtureT) Cleanup(func()) {}

func (t *fixtureT) Errorf(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.errs = append(t.errs, fmt.Sprintf(format, args...))
}

func (t *fixtureT) Fatalf(format string, args ...any) {
	t.Errorf(format, args...)
	runtime.Goexit()
}

// step runs f in its own goroutine, so a fatal fixture failure ends only f,
// and returns the failures f reported.
func (t *fixtureT) step(f func()) error {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	<-done
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.errs) == 0 {
		return nil
	}
	err := errors.New(strings.Join(t.errs, "; "))
	t.errs = nil
	return err
}
