package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Every run starts its wave on a quiet control plane: building the fleet
// leaves the controllers and the API server busy for a while (1.3 cores
// for seconds after 200 nodes), and the bound's run, which measures its
// replacement cycle and rate first, used to start on a quiet one while
// Drainpipe's started on a busy one.
const (
	quietShare  = 0.25            // of one core, the control plane's processes together
	quietWindow = time.Second     // over which the share is measured
	settleMax   = 3 * time.Minute // then the wave starts anyway, the share reported
	userHZ      = 100             // clock ticks per second in /proc (USER_HZ)
)

// settle waits until the processes pids (the sandbox's components) use
// less than quietShare of a core over quietWindow, or settleMax has
// passed. It returns how long it waited and the last share measured.
func settle(ctx context.Context, pids map[string]int) (time.Duration, float64, error) {
	start := time.Now()
	prev, err := cpuTicks(pids)
	if err != nil {
		return 0, 0, err
	}
	t := time.NewTicker(quietWindow)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return time.Since(start), 0, ctx.Err()
		case <-t.C:
		}
		cur, err := cpuTicks(pids)
		if err != nil {
			return time.Since(start), 0, err
		}
		share := float64(cur-prev) / userHZ / quietWindow.Seconds()
		if share < quietShare || time.Since(start) >= settleMax {
			return time.Since(start), share, nil
		}
		prev = cur
	}
}

// cpuTicks sums the user and system clock ticks of pids so far.
func cpuTicks(pids map[string]int) (int64, error) {
	var sum int64
	for name, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return 0, fmt.Errorf("reading the CPU time of %s: %w", name, err)
		}
		s := string(b)
		// The fields after the command, which may hold spaces, in ")".
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 13 {
			return 0, fmt.Errorf("reading the CPU time of %s: short /proc stat", name)
		}
		for _, x := range f[11:13] { // utime, stime
			n, err := strconv.ParseInt(x, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("reading the CPU time of %s: %w", name, err)
			}
			sum += n
		}
	}
	return sum, nil
}
