package stack

import (
	"fmt"
	"time"

	"github.com/drainpipe/drainpipe/internal/config"
)

// sqsMaxVisibility is how long after its receipt SQS lets a message stay
// invisible: a rebalance hold keeps its record in flight that long at most.
const sqsMaxVisibility = 12 * time.Hour

// checkEnv runs the function's own configuration loader over the exact
// environment the stack gives it, so a value the function would refuse at
// every start (DRAINPIPE_TAINT_EFFECT=NoExecute) fails synth instead, and
// a misspelt name is not silently ignored.
func (p Props) checkEnv() []error {
	env := p.environment()
	var errs []error
	var environ []string
	for k, v := range env {
		environ = append(environ, k+"="+v)
	}
	for _, u := range config.UnknownNames(environ) {
		errs = append(errs, fmt.Errorf("env: %s", u))
	}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		return append(errs, fmt.Errorf("env: the function would refuse to start: %w", err))
	}
	// The hold is counted from the cordon, which comes up to a whole
	// invocation after the record's receipt.
	if hold := cfg.Return.RebalanceHold; hold > 0 && hold+p.Timeout > sqsMaxVisibility {
		errs = append(errs, fmt.Errorf("env: DRAINPIPE_REBALANCE_HOLD %v plus timeoutSeconds (%v) exceeds the %v SQS lets a message stay invisible after its receipt",
			hold, p.Timeout, sqsMaxVisibility))
	}
	return errs
}
