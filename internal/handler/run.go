package handler

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// taskResult is a task's result once its actor returned.
type taskResult struct {
	Result
	finished bool
	end      time.Time
}

// run acts on every task, at most Concurrency at once. It returns when all
// tasks are finished or the deadline (less half the reserve) has come;
// tasks not finished by then are left unfinished in the results, and the
// records behind them are retried. gave lists the tasks the batch gave
// back to queue (see GiveWay), nil when it did not give way.
func (h *Handler) run(ctx context.Context, tasks []Task, queue string) (_ []taskResult, gave []int) {
	// The tasks' context ends when run returns, in every case: the actor
	// keeps hooks its tasks left pending heartbeated until then.
	actCtx, cancelAll := context.WithCancel(ctx)
	defer cancelAll()
	waitCtx := ctx
	if deadline, ok := ctx.Deadline(); ok && h.opts.DeadlineReserve > 0 {
		var cancelAct, cancelWait context.CancelFunc
		actCtx, cancelAct = context.WithDeadline(actCtx, deadline.Add(-h.opts.DeadlineReserve))
		waitCtx, cancelWait = context.WithDeadline(ctx, deadline.Add(-h.opts.DeadlineReserve/2))
		defer cancelAct()
		defer cancelWait()
	}
	if actCtx.Err() != nil && ctx.Err() == nil {
		return h.cannotAct(ctx, tasks), nil
	}
	// Only a batch that may give way carries a yield context: the
	// pipeline merges it into every drain's budget.
	giving := h.opts.GiveWay.on() && queue != ""
	var give context.CancelCauseFunc
	if giving {
		var yield context.Context
		yield, give = context.WithCancelCause(context.Background())
		defer give(nil)
		actCtx = WithYield(actCtx, yield)
	}

	// An actor that can look a whole batch up at once (one EC2 call
	// instead of one per instance) gets the chance before dispatch.
	if h.preparer != nil {
		h.preparer.Prepare(actCtx, tasks)
	}
	var (
		mu      sync.Mutex
		results = make([]taskResult, len(tasks))
		wg      sync.WaitGroup
		sem     = make(chan struct{}, h.opts.Concurrency)
		allDone = make(chan struct{})
	)
	go func() {
		defer close(allDone)
	start:
		for i := range tasks {
			select {
			case sem <- struct{}{}:
			case <-actCtx.Done():
				break start
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				r := h.act(actCtx, tasks[i])
				mu.Lock()
				results[i] = taskResult{Result: r, finished: true, end: time.Now()}
				mu.Unlock()
			}()
		}
		wg.Wait()
	}()
	open := func() []int {
		mu.Lock()
		defer mu.Unlock()
		var left []int
		for i, r := range results {
			if !r.finished {
				left = append(left, i)
			}
		}
		return left
	}
	watchCtx, stopWatch := context.WithCancel(waitCtx)
	watched := make(chan struct{})
	if giving {
		go func() {
			defer close(watched)
			gave = h.watch(watchCtx, queue, tasks, open, give)
		}()
	} else {
		close(watched)
	}
	select {
	case <-allDone:
	case <-waitCtx.Done():
	}
	stopWatch()
	<-watched
	// Actors still running may finish later; they write into results,
	// which this copy no longer shares.
	mu.Lock()
	defer mu.Unlock()
	return append([]taskResult(nil), results...), gave
}

// act calls the actor (or the sweeper), turning a panic into a retry: one bad task must not
// take the batch down with it.
func (h *Handler) act(ctx context.Context, t Task) (r Result) {
	defer func() {
		if p := recover(); p != nil {
			h.opts.Log.ErrorContext(ctx, "actor panicked", "instance_id", t.InstanceID, "panic", fmt.Sprint(p))
			r = Result{Status: StatusRetry, Reason: fmt.Sprintf("actor panicked: %v", p)}
		}
	}()
	if err := ctx.Err(); err != nil {
		return Result{Status: StatusRetry, Reason: fmt.Sprintf("not started: %v", err)}
	}
	if y := Yielding(ctx); y.Err() != nil {
		return Result{Status: StatusRetry, Reason: fmt.Sprintf("not started: %v", context.Cause(y))}
	}
	return h.dispatch(ctx, t)
}
