package chaos

import (
	"context"
	"errors"
	"strings"
)

// 12. A wave wider than the event source reaches at once (two batches of
// one record, five nodes): batches on their first delivery give way to the
// messages waiting behind them, and every invariant still holds: hooks
// completed only on empty nodes, nothing dead-lettered, every node drained.
func waveWider() Scenario {
	fn := DefaultFunction()
	fn.MaxConcurrency, fn.BatchSize = 2, 1
	fn.Env = append(fn.Env, "DRAINPIPE_GIVE_WAY_AFTER=1s")
	return Scenario{Name: "wave-wider-than-mapping", Function: fn, Fault: func(ctx context.Context, r *Rig) error {
		if err := r.WaitSettled(ctx); err != nil {
			return err
		}
		n := 0
		for _, line := range r.Deployment.Mapping.Logs() {
			if strings.Contains(line, `"msg":"batch gives way"`) {
				n++
			}
		}
		r.Note("%d batches gave way", n)
		if n == 0 {
			return errors.New("no batch gave way: the scenario tested nothing")
		}
		return nil
	}}
}
