package lambdart

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// PeakRSS returns the bootstrap's peak resident set size in bytes: VmHWM
// from /proc while it runs, the kernel's rusage once it has exited. It is a
// measurement for budgets, Linux only.
func (rt *Runtime) PeakRSS() (int64, error) {
	select {
	case <-rt.exited:
		rt.mu.Lock()
		defer rt.mu.Unlock()
		if ru, ok := rt.state.SysUsage().(*syscall.Rusage); ok {
			return ru.Maxrss * 1024, nil // Linux reports kilobytes
		}
		return 0, errors.New("reading peak RSS: no rusage for the exited process")
	default:
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", rt.PID()))
	if err != nil {
		return 0, fmt.Errorf("reading peak RSS: %w", err)
	}
	return vmHWM(status)
}

// vmHWM parses the "VmHWM:  12345 kB" line of /proc/<pid>/status.
func vmHWM(status []byte) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("parsing VmHWM %q: unexpected format", rest)
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parsing VmHWM %q: %w", rest, err)
		}
		return kb * 1024, nil
	}
	return 0, errors.New("parsing process status: no VmHWM line")
}
