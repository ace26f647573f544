package esm

import (
	"context"
	"time"

	"github.com/drainpipe/drainpipe/test/lambdart"
)

// Func is a function run in process instead of a bootstrap: it gets the
// SQS event's JSON and answers the response's JSON. A benchmark's floor
// uses it to measure the event source's delivery alone, with no process
// start and no runtime API in the way.
type Func func(ctx context.Context, event []byte) ([]byte, error)

// runtime is what the mapping needs of an execution environment: a real
// bootstrap under lambdart, or a Func.
type runtime interface {
	Invoke(ctx context.Context, payload []byte, timeout time.Duration) (lambdart.Response, error)
	Logs() []string
	PID() int
	Close() error
}

var _ runtime = (*lambdart.Runtime)(nil)

// inProcess is an environment running a Func: ready at once, never killed
// (PID 0: Kill finds nothing to signal).
type inProcess struct{ fn Func }

func (p inProcess) Invoke(ctx context.Context, payload []byte, timeout time.Duration) (lambdart.Response, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	body, err := p.fn(ctx, payload)
	res := lambdart.Response{Body: body, Duration: time.Since(start)}
	switch {
	case ctx.Err() != nil && time.Since(start) >= timeout:
		res.Error = &lambdart.ErrorBody{Type: lambdart.TypeTimedOut, Message: "in-process function timed out"}
	case err != nil:
		res.Error = &lambdart.ErrorBody{Type: "Function.Error", Message: err.Error()}
	}
	return res, nil
}

func (inProcess) Logs() []string { return nil }
func (inProcess) PID() int       { return 0 }
func (inProcess) Close() error   { return nil }
