package sandbox

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"syscall"
	"time"
)

// Faults for chaos tests: a component restarted (an outage of a given
// length) or paused (alive, holding its connections, answering nothing).

// ErrStopped is returned by a fault on a sandbox that Stop has stopped.
var ErrStopped = errors.New("sandbox stopped")

// Restart stops one component ("etcd", "kube-apiserver",
// "kube-controller-manager", "kube-scheduler", "kwok", "authwebhook") by
// PID (SIGTERM, SIGKILL after a few seconds), keeps it down for down, starts
// it again with the same binary and arguments (so on the same ports; its
// log file is appended to) and returns once it passes the health check it
// passed at Start. PIDs and Stop then see the new process (during the
// outage PIDs still names the stopped one). Clients made before the
// restart work again once it returns. etcd and kube-apiserver, with
// clients watching, outlast the grace period: theirs ends in SIGKILL.
//
// ctx ending during down cuts the outage short: the component is started
// at once and Restart returns ctx's error without waiting for its health.
// Stop during down ends it too, with ErrStopped.
func (s *Sandbox) Restart(ctx context.Context, component string, down time.Duration) error {
	old, stopping, err := s.beginRestart(component)
	if err != nil {
		return err
	}
	defer s.endRestart(component)
	if err := old.stop(stopGrace); err != nil {
		return fmt.Errorf("restarting %s: %w", component, err)
	}
	s.log.Info("sandbox component stopped", "component", component, "pid", old.pid, "down_ms", down.Milliseconds())
	cut := keepDown(ctx, stopping, down)
	proc, err := s.respawn(old)
	if err != nil {
		return fmt.Errorf("restarting %s: %w", component, err)
	}
	if cut != nil {
		return fmt.Errorf("restarting %s: outage cut short: %w", component, cut)
	}
	if proc.ready == nil {
		return nil
	}
	if err := proc.ready(ctx, proc); err != nil {
		return fmt.Errorf("restarting %s: %w", component, err)
	}
	return nil
}

// beginRestart finds component's process and marks it as restarting, so
// two faults never restart it at once; the channel closes when Stop runs.
func (s *Sandbox) beginRestart(component string) (*process, <-chan struct{}, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.find(component)
	switch {
	case err != nil:
		return nil, nil, err
	case p.cmd == nil:
		return nil, nil, fmt.Errorf("restarting %s: started by another program", component)
	case s.restarting[component]:
		return nil, nil, fmt.Errorf("restarting %s: a restart is under way", component)
	}
	if s.restarting == nil {
		s.restarting, s.stopping = map[string]bool{}, make(chan struct{})
	}
	s.restarting[component] = true
	return p, s.stopping, nil
}

func (s *Sandbox) endRestart(component string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.restarting, component)
}

// respawn starts old's binary again with its arguments and log, in its
// place in procs, unless Stop came first.
func (s *Sandbox) respawn(old *process) (*process, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.Index(s.procs, old)
	if s.stopped || i < 0 {
		return nil, ErrStopped
	}
	p, err := spawn(s.launch, filepath.Dir(old.path), filepath.Dir(old.log), old.name, old.detach, old.args...)
	if err != nil {
		return nil, err
	}
	p.ready = old.ready
	s.procs[i] = p
	s.log.Info("sandbox component restarted", "component", p.name, "pid", p.pid)
	// make sandbox-down stops by the recorded PIDs.
	return p, s.writeState(filepath.Join(s.dir, stateFile))
}

// Pause freezes one component with SIGSTOP: its sockets stay open but it
// answers nothing (say, etcd stalled longer than the API server's request
// timeouts). Resume undoes it; Stop stops a paused component too.
func (s *Sandbox) Pause(component string) error {
	return s.signal(component, syscall.SIGSTOP)
}

// Resume continues a component frozen by Pause (SIGCONT).
func (s *Sandbox) Resume(component string) error {
	return s.signal(component, syscall.SIGCONT)
}

func (s *Sandbox) signal(component string, sig syscall.Signal) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.find(component)
	if err != nil {
		return err
	}
	if done, _ := p.exited(); done {
		return fmt.Errorf("signalling %s (pid %d): not running", component, p.pid)
	}
	if p.cmd != nil {
		err = p.cmd.Process.Signal(sig)
	} else {
		err = syscall.Kill(p.pid, sig)
	}
	if err != nil {
		return fmt.Errorf("signalling %s (pid %d) with %v: %w", component, p.pid, sig, err)
	}
	s.log.Info("sandbox component signalled", "component", component, "pid", p.pid, "signal", sig.String())
	return nil
}

// find returns the process of component; s.mu is held.
func (s *Sandbox) find(component string) (*process, error) {
	if s.stopped {
		return nil, ErrStopped
	}
	for _, p := range s.procs {
		if p.name == component {
			return p, nil
		}
	}
	return nil, fmt.Errorf("sandbox: no component %q", component)
}

// keepDown waits d unless ctx ends or stopping closes first, returning
// ctx's error for the former.
func keepDown(ctx context.Context, stopping <-chan struct{}, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-stopping: // respawn sees Stop
	case <-t.C:
	}
	return nil
}
