package sandbox

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
)

// reaperScript waits for its owner to say the directory is taken care of
// (any line on stdin). When stdin ends without one, the owner died without
// stopping the sandbox (a test timeout, a panic, a kill): it removes all but
// the component logs, as Main does after failed tests, retrying while the
// components (killed by Pdeathsig at the same time) may still write.
const reaperScript = `trap '' HUP INT TERM
if read -r _; then exit 0; fi
for f in "$1"/* "$1"/.[!.]*; do
	[ -e "$f" ] && [ "$f" != "$1/logs" ] || continue
	n=0
	until rm -rf "$f" 2>/dev/null; do
		n=$((n+1)); [ "$n" -lt 10 ] || break
		sleep 1
	done
done
echo "sandbox: the test process ended without stopping the sandbox; removed its data, component logs kept in $1/logs" >&2
`

// reaper removes a sandbox's temporary directory after its owner process
// dies without Stop: a separate process, not a child of the launcher thread
// (no Pdeathsig), that holds the read end of a pipe only the owner writes.
type reaper struct {
	w   io.WriteCloser
	cmd *exec.Cmd
}

// startReaper starts the reaper of dir. Its stderr is the owner's, so
// `go test`, reading the test binary's output to its end, also waits for
// the cleanup.
func startReaper(dir string) (*reaper, error) {
	cmd := exec.Command("/bin/sh", "-c", reaperScript, "sandbox-reaper", dir)
	cmd.Stderr = os.Stderr
	// Its own process group: a terminal's ^C must not end it before the
	// owner does.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	w, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("starting the directory reaper: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the directory reaper: %w", err)
	}
	return &reaper{w: w, cmd: cmd}, nil
}

// release tells the reaper the directory is taken care of (removed, or kept
// on purpose) and waits for it to exit.
func (r *reaper) release() error {
	_, werr := io.WriteString(r.w, "released\n")
	cerr := r.w.Close()
	if err := r.cmd.Wait(); err != nil {
		return fmt.Errorf("directory reaper: %w", err)
	}
	if werr != nil {
		return fmt.Errorf("releasing the directory reaper: %w", werr)
	}
	return cerr
}
