// Package esm runs an SQS event source mapping the way Lambda runs one,
// against a modelled queue of test/awsfake and real bootstrap processes
// under test/lambdart: pollers receive batches (BatchSize, BatchWindow), up
// to MaximumConcurrency execution environments each take one invocation
// at a time (started cold on first need, reused warm), the partial batch
// response decides which messages are deleted, and an invocation that
// overruns the function timeout kills its environment, its batch coming
// back after the visibility timeout.
//
// Faults for tests: Kill SIGKILLs a busy environment; the queue and the
// AWS calls take awsfake's faults.
package esm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"syscall"
	"time"

	"github.com/drainpipe/drainpipe/test/awsfake"
	"github.com/drainpipe/drainpipe/test/lambdart"
)

// Options configure a mapping and its function.
type Options struct {
	Fake     *awsfake.Server
	QueueURL string // a queue made by Fake.CreateQueue
	QueueARN string // the records' eventSourceARN

	BatchSize      int           // default 10
	BatchWindow    time.Duration // MaximumBatchingWindowInSeconds; 0: invoke with what one receive brings
	MaxConcurrency int           // ScalingConfig.MaximumConcurrency; default 10
	Timeout        time.Duration // the function timeout; default 300 s

	// Bootstrap, Env, FunctionName and Region are the function's
	// (lambdart.Options); Stdout receives every environment's output.
	Bootstrap string
	Env       []string
	// Func, set instead of Bootstrap, runs the function in process.
	Func         Func
	FunctionName string
	Region       string
	Stdout       io.Writer
}

// Invocation is one invocation's record.
type Invocation struct {
	Env      int // the environment's index, in start order
	Cold     bool
	Start    time.Time
	Duration time.Duration
	Messages int
	IDs      []string // the batch's message ids
	Failed   int      // items the response reported failed
	Outcome  string   // ok, partial, error, timeout, crashed
}

// Mapping is a running event source mapping.
type Mapping struct {
	opts   Options
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu          sync.Mutex
	envs        []*env
	live, peak  int
	invocations []Invocation
	stopErrs    []error
}

type env struct {
	idx  int
	rt   runtime
	busy bool
}

// Start begins polling. Stop ends it and the environments.
func Start(opts Options) (*Mapping, error) {
	if opts.Fake == nil || opts.QueueURL == "" || (opts.Bootstrap == "") == (opts.Func == nil) {
		return nil, errors.New("esm: Fake, QueueURL and one of Bootstrap or Func are required")
	}
	if opts.BatchSize == 0 {
		opts.BatchSize = 10
	}
	if opts.MaxConcurrency == 0 {
		opts.MaxConcurrency = 10
	}
	if opts.Timeout == 0 {
		opts.Timeout = 300 * time.Second
	}
	if opts.BatchSize > 10 && opts.BatchWindow == 0 {
		return nil, errors.New("esm: a batch size over 10 needs a batch window, as Lambda requires")
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Mapping{opts: opts, cancel: cancel}
	for range opts.MaxConcurrency {
		m.wg.Go(func() { m.poll(ctx) })
	}
	return m, nil
}

// Stop stops polling, cuts the invocations in flight (their batches come
// back after the visibility timeout) and closes every environment.
func (m *Mapping) Stop() error {
	m.cancel()
	m.wg.Wait()
	m.mu.Lock() // every poller has retired its environment
	defer m.mu.Unlock()
	return errors.Join(m.stopErrs...)
}

// Invocations returns every invocation so far.
func (m *Mapping) Invocations() []Invocation {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Invocation(nil), m.invocations...)
}

// PeakEnvironments is the most environments alive at once.
func (m *Mapping) PeakEnvironments() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.peak
}

// Logs returns the output of every environment started so far.
func (m *Mapping) Logs() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, e := range m.envs {
		out = append(out, e.rt.Logs()...)
	}
	return out
}

// Kill SIGKILLs the process of one environment that is running an
// invocation (the fault "function killed mid-drain") and returns its PID;
// false when none is busy. Its batch returns after the visibility timeout.
func (m *Mapping) Kill() (int, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range m.envs {
		if e.busy && e.rt.PID() > 0 {
			pid := e.rt.PID()
			_ = syscall.Kill(pid, syscall.SIGKILL) // it may have exited already
			return pid, true
		}
	}
	return 0, false
}

// poll is one concurrency slot: it receives a batch, invokes its
// environment (starting one when it has none) and applies the answer.
func (m *Mapping) poll(ctx context.Context) {
	var e *env
	defer func() {
		if e != nil {
			m.retire(e)
		}
	}()
	for ctx.Err() == nil {
		batch := m.gather(ctx)
		if len(batch) == 0 {
			continue
		}
		cold := e == nil
		if cold {
			var err error
			if e, err = m.launch(ctx); err != nil {
				m.record(Invocation{Env: -1, Cold: true, Start: time.Now(), Messages: len(batch), Outcome: "init-error"})
				continue // nothing deleted: the batch comes back
			}
		}
		inv, keep := m.invoke(ctx, e, batch)
		inv.Cold = cold
		m.record(inv)
		if !keep {
			m.retire(e)
			e = nil
		}
	}
}

// gather receives up to BatchSize messages: what one long poll brings, or
// with a batch window, what arrives until the window closes or the batch
// is full.
func (m *Mapping) gather(ctx context.Context) []awsfake.Received {
	var batch []awsfake.Received
	deadline := time.Now().Add(m.opts.BatchWindow)
	for len(batch) < m.opts.BatchSize {
		wait := time.Second // a short long-poll keeps Stop prompt
		if len(batch) > 0 {
			if wait = time.Until(deadline); wait <= 0 {
				break
			}
		}
		got, err := m.opts.Fake.ReceiveMessages(ctx, m.opts.QueueURL, min(10, m.opts.BatchSize-len(batch)), wait)
		if err != nil {
			return batch // ctx ended: what was received comes back after its visibility
		}
		batch = append(batch, got...)
		if m.opts.BatchWindow == 0 && len(batch) > 0 {
			break
		}
	}
	return batch
}

func (m *Mapping) launch(ctx context.Context) (*env, error) {
	if m.opts.Func != nil {
		return m.add(inProcess{m.opts.Func}), nil
	}
	rt, err := lambdart.Launch(ctx, lambdart.Options{
		Bootstrap: m.opts.Bootstrap, Env: m.opts.Env, FunctionName: m.opts.FunctionName,
		Region: m.opts.Region, Stdout: m.opts.Stdout,
	})
	if err != nil {
		return nil, fmt.Errorf("starting an environment: %w", err)
	}
	e := m.add(rt)
	// Lambda's init phase has its own limit (10 s for on-demand init).
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := rt.Ready(rctx); err != nil {
		m.retire(e)
		return nil, fmt.Errorf("initialising an environment: %w", err)
	}
	return e, nil
}

// add counts a started environment in.
func (m *Mapping) add(rt runtime) *env {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := &env{idx: len(m.envs), rt: rt}
	m.envs = append(m.envs, e)
	m.live++
	m.peak = max(m.peak, m.live)
	return e
}

// retire closes an environment that will take no more invocations.
func (m *Mapping) retire(e *env) {
	err := e.rt.Close()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.live--
	if err != nil {
		m.stopErrs = append(m.stopErrs, err)
	}
}

func (m *Mapping) record(inv Invocation) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.invocations = append(m.invocations, inv)
}

func (m *Mapping) setBusy(e *env, busy bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e.busy = busy
}
