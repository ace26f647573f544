package main

import (
	"runtime/debug"
	"strconv"

	"github.com/drainpipe/drainpipe/internal/config"
)

// gcPercent is the function's GOGC where its deployment does not set one
// (the stack does: config.RuntimeEnv). An environment's life is short and
// its memory mostly unused: at Go's default of 100 a cold start collects
// during its first milliseconds, while a wave's environments share the
// cores they start on (docs/performance.md#why-the-constants-are-what-they-are).
const gcPercent = config.GOGC

// gcSettings is the collector's setting for this environment: gcPercent
// and a soft memory limit of three quarters of the function's memory
// (AWS_LAMBDA_FUNCTION_MEMORY_SIZE, MB), so the heap that gcPercent lets
// grow is collected harder well before Lambda's limit; the rest is for
// the binary, stacks and buffers outside the limit. GOGC or GOMEMLIMIT
// in the environment leave the runtime's own reading of them alone
// (ok false for that setting).
func gcSettings(getenv func(string) string) (percent int, setPercent bool, limit int64, setLimit bool) {
	if getenv("GOGC") == "" {
		percent, setPercent = gcPercent, true
	}
	if getenv("GOMEMLIMIT") == "" {
		if mb, err := strconv.Atoi(getenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE")); err == nil && mb > 0 {
			limit, setLimit = int64(mb)<<20/4*3, true
		}
	}
	return percent, setPercent, limit, setLimit
}

// tuneGC applies gcSettings.
func tuneGC(getenv func(string) string) {
	percent, setPercent, limit, setLimit := gcSettings(getenv)
	if setLimit {
		debug.SetMemoryLimit(limit)
	}
	if setPercent {
		debug.SetGCPercent(percent)
	}
}
