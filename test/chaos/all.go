package chaos

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/drainpipe/drainpipe/test/sandbox"
)

// setupSlots is how many scenarios start their control plane and build
// their fleet at once.
const setupSlots = 3

// runSlots is how many scenarios run at once unless CHAOS_PARALLEL says
// otherwise. All eleven at once, beside the other test packages, loaded a
// 2-core CI machine so that a restarted API server denied requests (its
// RBAC cache not yet filled) past a Spot notice: a fault of the rig, not
// of the function under test.
const runSlots = 5

// Outcome is one scenario's result, or why the rig could not run it.
type Outcome struct {
	Result
	Err error
}

// RunAll runs the scenarios, env.Parallel (else runSlots) at a time in
// their order, each on a control plane of its own started from binDir
// (their time goes to waiting on timeouts, not to computing), each with
// its own directory under env.Dir.
func RunAll(ctx context.Context, binDir string, scenarios []Scenario, env Env) []Outcome {
	out := make([]Outcome, len(scenarios))
	if env.Setup == nil {
		env.Setup = make(chan struct{}, setupSlots)
	}
	slots := env.Parallel
	if slots <= 0 {
		slots = runSlots
	}
	running := make(chan struct{}, slots)
	var wg sync.WaitGroup
	for i, sc := range scenarios {
		running <- struct{}{}
		wg.Go(func() {
			defer func() { <-running }()
			out[i] = runOwn(ctx, binDir, sc, env, i)
		})
	}
	wg.Wait()
	return out
}

func runOwn(ctx context.Context, binDir string, sc Scenario, env Env, i int) (o Outcome) {
	o.Scenario = sc.Name
	dir, err := os.MkdirTemp(env.Dir, fmt.Sprintf("scenario-%d-", i))
	if err != nil {
		o.Err = err
		return o
	}
	env.Dir = dir
	opts := sc.Sandbox
	opts.BinDir = binDir
	env.Setup <- struct{}{}
	sctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	sb, err := sandbox.Start(sctx, opts)
	cancel()
	<-env.Setup
	if err != nil {
		o.Err = fmt.Errorf("starting sandbox: %w", err)
		return o
	}
	defer func() {
		if err := sb.Stop(); err != nil && o.Err == nil {
			o.Err = fmt.Errorf("stopping sandbox: %w", err)
		}
	}()
	o.Result, o.Err = Run(ctx, sb, sc, env)
	return o
}
