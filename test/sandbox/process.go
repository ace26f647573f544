package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// stopGrace is how long a component gets to exit after SIGTERM.
const stopGrace = 5 * time.Second

// process is one running component. cmd is nil when the process was
// started by another program (sandbox down reads PIDs from a state file).
type process struct {
	name   string
	path   string
	pid    int
	log    string
	args   []string  // what it was started with, for Restart
	detach bool      // started in its own session
	ready  readyFunc // its health check, for Restart; nil: none
	cmd    *exec.Cmd
	done   chan struct{} // closed when cmd.Wait returns
	err    error         // cmd.Wait's result, valid after done
}

// readyFunc waits until p is healthy, p exits or ctx ends.
type readyFunc func(ctx context.Context, p *process) error

// launcher starts processes from one OS thread that stays alive until the
// sandbox stops: Pdeathsig fires when the creating thread exits, not the
// process, so an unlocked goroutine could get the children killed early.
type launcher struct {
	reqs chan launchReq
}

type launchReq struct {
	cmd *exec.Cmd
	err chan error
}

func newLauncher() *launcher {
	l := &launcher{reqs: make(chan launchReq)}
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		for r := range l.reqs {
			r.err <- r.cmd.Start()
		}
	}()
	return l
}

func (l *launcher) start(cmd *exec.Cmd) error {
	errc := make(chan error, 1)
	l.reqs <- launchReq{cmd: cmd, err: errc}
	return <-errc
}

func (l *launcher) close() { close(l.reqs) }

// spawn starts binDir/name with args, its output appended to logDir/name.log.
func spawn(l *launcher, binDir, logDir, name string, detach bool, args ...string) (*process, error) {
	logPath := filepath.Join(logDir, name+".log")
	out, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", logPath, err)
	}
	defer out.Close() // the child keeps its own descriptor
	path := filepath.Join(binDir, name)
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = append(os.Environ(), "KUBECONFIG=/dev/null") // never fall back to the user's cluster
	if detach {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	} else {
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	}
	if err := l.start(cmd); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{
		name: name, path: path, pid: cmd.Process.Pid, log: logPath, args: args, detach: detach,
		cmd: cmd, done: make(chan struct{}),
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether a process we started has ended, with its error.
func (p *process) exited() (bool, error) {
	if p.cmd == nil {
		return !alive(p.pid, p.path), nil
	}
	select {
	case <-p.done:
		return true, fmt.Errorf("%s exited: %v; last log lines:\n%s", p.name, p.err, tail(p.log, 15))
	default:
		return false, nil
	}
}

// stop sends SIGTERM, then SIGKILL after grace. SIGCONT follows SIGTERM
// so that a paused process (Sandbox.Pause) can act on it.
func (p *process) stop(grace time.Duration) error {
	if p.cmd != nil {
		return p.stopChild(grace)
	}
	if !alive(p.pid, p.path) {
		return nil
	}
	if err := syscall.Kill(p.pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stopping %s (pid %d): %w", p.name, p.pid, err)
	}
	_ = syscall.Kill(p.pid, syscall.SIGCONT) // it may have exited already
	deadline := time.Now().Add(grace)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for alive(p.pid, p.path) {
		if time.Now().After(deadline) {
			if err := syscall.Kill(p.pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
				return fmt.Errorf("killing %s (pid %d): %w", p.name, p.pid, err)
			}
			return nil
		}
		<-tick.C
	}
	return nil
}

func (p *process) stopChild(grace time.Duration) error {
	select {
	case <-p.done:
		return nil
	default:
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("stopping %s (pid %d): %w", p.name, p.pid, err)
	}
	_ = p.cmd.Process.Signal(syscall.SIGCONT) // it may have exited already
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-p.done:
		return nil
	case <-timer.C:
	}
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("killing %s (pid %d): %w", p.name, p.pid, err)
	}
	<-p.done
	return nil
}

// alive reports whether pid is still running path; a recycled PID running
// something else, or a zombie, counts as gone.
func alive(pid int, path string) bool {
	exe, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	if err != nil || strings.TrimSuffix(exe, " (deleted)") != path {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name: "pid (comm) S ...".
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
		return false
	}
	return true
}

// tail returns the last n lines of a file, for error messages.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
