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
// back to queue (see GiveWay), nil when it did not give way, and way what
// the batch did about giving way ("" when it may not).
func (h *Handler) run(ctx context.Context, tasks []Task, queue string) (_ []taskResult, gave []int, way string) {
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
		return h.cannotAct(ctx, tasks), nil, ""
	}
	// Only a batch that may give way carries a yield context: the
	// pipeline merges it into every drain's budget.
	giving := h.opts.GiveWay.on() && queue != ""
	var give context.CancelCauseFunc
	var ho *handoff
	if giving {
		ho = newHandoff(len(tasks))
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
		for _, i := range deadlinesFirst(tasks) {
			select {
			case sem <- struct{}{}:
			case <-actCtx.Done():
				break start
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				tctx := actCtx
				if ho != nil {
					tctx = withCordoned(actCtx, ho, i)
				}
				r := h.act(tctx, tasks[i])
				mu.Lock()
				results[i] = taskResult{Result: r, finished: true, end: time.Now()}
				mu.Unlock()
				if ho != nil {
					ho.settle(i)
				}
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
			gave, way = h.watch(watchCtx, queue, tasks, open, ho, give)
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
	return append([]taskResult(nil), results...), gave, way
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

// deadlinesFirst is the order tasks are dispatched in: those whose
// instance has a deadline (a Spot warning, a scheduled event) before
// those that can wait (a terminate hook), each in the batch's order, so
// that with fewer slots than tasks the deadlines take the first ones.
func deadlinesFirst(tasks []Task) []int {
	order := make([]int, 0, len(tasks))
	for _, first := range []bool{true, false} {
		for i, t := range tasks {
			if hasDeadline(t) == first {
				order = append(order, i)
			}
		}
	}
	return order
}
