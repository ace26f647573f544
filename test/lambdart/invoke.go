package lambdart

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// TypeTimedOut is the error type of an invocation that overran its deadline.
const TypeTimedOut = "Sandbox.Timedout"

// Response is the outcome of one invocation.
type Response struct {
	RequestID string
	// Body is what the function posted to /response.
	Body []byte
	// Error is set when the function posted to /error or overran its
	// deadline (Type TypeTimedOut).
	Error *ErrorBody
	// Duration runs from the bootstrap receiving the event to its answer.
	Duration time.Duration
}

// TimedOut reports whether the function overran its deadline.
func (r Response) TimedOut() bool { return r.Error != nil && r.Error.Type == TypeTimedOut }

// Invoke sends payload as the next event with a deadline timeout from now,
// and waits for the function's answer. As Lambda does, it kills the process
// when the deadline passes without one: the Response then carries a
// TypeTimedOut error and the runtime takes no further invocations.
//
// The returned error is for failures of the harness or the process (ctx
// ended, init failed, process exited); a function error is in Response.
//
// The answer comes over HTTP and the output through a pipe, so lines the
// function printed before answering may not be in Logs yet when Invoke
// returns: wait for the last one expected with WaitLog.
func (rt *Runtime) Invoke(ctx context.Context, payload []byte, timeout time.Duration) (Response, error) {
	if timeout <= 0 {
		return Response{}, errors.New("invoking: timeout must be positive")
	}
	inv := &invocation{
		id:       newRequestID(),
		payload:  payload,
		deadline: time.Now().Add(timeout),
		taken:    make(chan time.Time, 1),
		done:     make(chan Response, 1),
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()

	select {
	case rt.queue <- inv:
	case <-deadline.C:
		// Lambda's clock runs from the invoke, init included.
		return rt.timedOut(inv, timeout), nil
	case <-rt.initFailed:
		return Response{}, &InitError{Body: *rt.InitError()}
	case <-rt.exited:
		return Response{}, fmt.Errorf("invoking %s: %w", inv.id, rt.exitError())
	case <-rt.closing:
		return Response{}, fmt.Errorf("invoking %s: runtime closed", inv.id)
	case <-ctx.Done():
		return Response{}, fmt.Errorf("invoking %s: %w", inv.id, ctx.Err())
	}
	takenAt := <-inv.taken // sent before the event is written: never blocks long

	select {
	case res := <-inv.done:
		res.Duration = time.Since(takenAt)
		return res, nil
	case <-deadline.C:
		return rt.timedOut(inv, timeout), nil
	case <-rt.exited:
		return Response{}, fmt.Errorf("invoking %s: %w", inv.id, rt.exitError())
	case <-ctx.Done():
		return Response{}, fmt.Errorf("invoking %s: %w", inv.id, ctx.Err())
	}
}

// timedOut ends the process as Lambda ends a timed-out environment, unless
// the answer raced the deadline and won.
func (rt *Runtime) timedOut(inv *invocation, timeout time.Duration) Response {
	select {
	case res := <-inv.done:
		return res
	default:
	}
	rt.mu.Lock()
	delete(rt.inflight, inv.id)
	rt.mu.Unlock()
	_ = rt.cmd.Process.Kill() // errors only if it already exited
	<-rt.exited
	return Response{
		RequestID: inv.id,
		Error: &ErrorBody{
			Type:    TypeTimedOut,
			Message: fmt.Sprintf("Task timed out after %.2f seconds", timeout.Seconds()),
		},
		Duration: timeout,
	}
}
