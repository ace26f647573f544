// Package sandbox runs a real Kubernetes control plane on 127.0.0.1 for
// tests and demos: etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler and kwok (simulated kubelets), built by
// test/sandbox/build/build.sh. Every process listens on loopback on free
// ports, so several sandboxes can run side by side, and every process is
// stopped by its PID.
//
// Tests use ForTest (one shared sandbox per test binary, stopped by Main);
// programs use Start and Stop.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

// DefaultKubernetesVersion is the control plane's version unless
// $DRAINPIPE_K8S_VERSION names another of KubernetesVersions.
const DefaultKubernetesVersion = "v1.36.3"

// KubernetesVersions are the control plane versions build.sh builds (each
// pinned by a module in test/sandbox/build), oldest first: the support
// matrix that make test-matrix runs.
func KubernetesVersions() []string { return []string{"v1.32.13", DefaultKubernetesVersion} }

// KubernetesVersion is the version of the control plane binaries a sandbox
// runs: $DRAINPIPE_K8S_VERSION (as for build.sh), else the default.
func KubernetesVersion(getenv func(string) string) string {
	if v := getenv("DRAINPIPE_K8S_VERSION"); v != "" {
		return v
	}
	return DefaultKubernetesVersion
}

// Options configure Start. The zero value is usable.
type Options struct {
	// BinDir holds the binaries; empty means DefaultBinDir(os.Getenv).
	BinDir string
	// Dir receives certificates, configs, etcd data and logs; empty means a
	// new temporary directory, removed by Stop unless KeepDir is set.
	Dir string
	// KeepDir keeps Dir (logs included) after Stop.
	KeepDir bool
	// Detach starts the processes in their own session so they outlive this
	// program (make sandbox-up); otherwise they die with it.
	Detach bool
	// Logger receives progress; nil discards it.
	Logger *slog.Logger
	// EKSAuth, when set, has the API server authenticate EKS tokens through
	// the aws-iam-authenticator webhook (see Sandbox.EKS).
	EKSAuth *EKSAuth
	// APIServerFlags are extra kube-apiserver flags, appended last so they
	// override the defaults (e.g. --watch-cache=false).
	APIServerFlags []string
}

// Sandbox is a running control plane.
type Sandbox struct {
	dir        string
	ownDir     bool
	keepDir    bool
	kubeconfig string
	config     *rest.Config
	procs      []*process
	reaper     *reaper // removes an own temporary directory if Stop never runs
	launch     *launcher
	log        *slog.Logger
	eks        *EKSCluster
	binDir     string
	claim      *portClaim // the components' ports, kept from other sandboxes until Stop

	// mu guards procs, launch and stopped against the faults (Restart,
	// Pause), which may run while another goroutine calls PIDs or Stop.
	mu         sync.Mutex
	stopped    bool
	restarting map[string]bool // components in Restart
	stopping   chan struct{}   // closed by Stop; made by the first Restart
}

// DefaultBinDir is where build.sh puts the binaries:
// $DRAINPIPE_SANDBOX_BIN, else ${XDG_CACHE_HOME:-$HOME/.cache}/drainpipe/sandbox-<version>/bin
// for the KubernetesVersion selected.
func DefaultBinDir(getenv func(string) string) string {
	if d := getenv("DRAINPIPE_SANDBOX_BIN"); d != "" {
		return d
	}
	cache := getenv("XDG_CACHE_HOME")
	if cache == "" {
		cache = filepath.Join(getenv("HOME"), ".cache")
	}
	return filepath.Join(cache, "drainpipe", "sandbox-"+KubernetesVersion(getenv), "bin")
}

// binaries are the programs a sandbox runs, in start order.
var binaries = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"}

// ErrNoBinaries reports that the sandbox binaries have not been built.
var ErrNoBinaries = errors.New("sandbox binaries not found: run make sandbox-build")

// CheckBinaries returns ErrNoBinaries (wrapped with the missing path) unless
// every binary is present in binDir.
func CheckBinaries(binDir string) error {
	for _, b := range binaries {
		if _, err := os.Stat(filepath.Join(binDir, b)); err != nil {
			return fmt.Errorf("checking %s: %w", filepath.Join(binDir, b), ErrNoBinaries)
		}
	}
	return nil
}

// Start launches a control plane and returns once it is ready: the API
// server answers /readyz, the controller manager, scheduler and kwok answer
// /healthz. ctx bounds only the start; the processes run until Stop.
func Start(ctx context.Context, opts Options) (*Sandbox, error) {
	if opts.BinDir == "" {
		opts.BinDir = DefaultBinDir(os.Getenv)
	}
	if err := CheckBinaries(opts.BinDir); err != nil {
		return nil, err
	}
	if opts.EKSAuth != nil {
		if _, err := os.Stat(filepath.Join(opts.BinDir, webhookBinary)); err != nil {
			return nil, fmt.Errorf("checking %s: %w", filepath.Join(opts.BinDir, webhookBinary), ErrNoBinaries)
		}
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Sandbox{dir: opts.Dir, keepDir: opts.KeepDir, log: log, binDir: opts.BinDir}
	if s.dir == "" {
		d, err := os.MkdirTemp("", "drainpipe-sandbox-")
		if err != nil {
			return nil, fmt.Errorf("creating sandbox directory: %w", err)
		}
		s.dir, s.ownDir = d, true
		if !opts.Detach && !opts.KeepDir {
			// Stop removes the directory; the reaper does when this
			// process dies first (timeout, panic).
			if s.reaper, err = startReaper(d); err != nil {
				return nil, errors.Join(err, os.RemoveAll(d))
			}
		}
	}
	begin := time.Now()
	if err := s.start(ctx, opts); err != nil {
		stopErr := s.Stop()
		return nil, errors.Join(fmt.Errorf("starting sandbox (logs in %s): %w", s.LogDir(), err), stopErr)
	}
	log.Info("sandbox ready", "dir", s.dir, "kubeconfig", s.kubeconfig, "elapsed_ms", time.Since(begin).Milliseconds())
	return s, nil
}

// RESTConfig returns a copy of the admin (system:masters) client config,
// with QPS 500 and burst 1000 so test setup is not throttled client-side.
func (s *Sandbox) RESTConfig() *rest.Config { return rest.CopyConfig(s.config) }

// KubeconfigPath is an admin kubeconfig file usable by kubectl.
func (s *Sandbox) KubeconfigPath() string { return s.kubeconfig }

// Dir is the sandbox's working directory.
func (s *Sandbox) Dir() string { return s.dir }

// LogDir holds one log file per component.
func (s *Sandbox) LogDir() string { return filepath.Join(s.dir, "logs") }

// PIDs returns the process id of every running component by name.
func (s *Sandbox) PIDs() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := make(map[string]int, len(s.procs))
	for _, p := range s.procs {
		m[p.name] = p.pid
	}
	return m
}

// Stop terminates every process by PID (SIGTERM, then SIGKILL after a few
// seconds), in reverse start order, and removes a temporary directory
// unless KeepDir was set. A paused component is resumed to stop; a
// Restart under way starts nothing more.
func (s *Sandbox) Stop() error {
	s.mu.Lock()
	if s.stopping != nil && !s.stopped {
		close(s.stopping)
	}
	s.stopped = true
	procs, launch, claim := s.procs, s.launch, s.claim
	s.procs, s.launch, s.claim = nil, nil, nil
	s.mu.Unlock()
	var errs []error
	for i := len(procs) - 1; i >= 0; i-- {
		if err := procs[i].stop(stopGrace); err != nil {
			errs = append(errs, err)
		}
	}
	// Only now: the launcher thread's exit fires the children's Pdeathsig.
	if launch != nil {
		launch.close()
	}
	if claim != nil { // the components are gone: their ports are free
		claim.release()
	}
	if s.ownDir && !s.keepDir && len(errs) == 0 {
		if err := os.RemoveAll(s.dir); err != nil {
			errs = append(errs, fmt.Errorf("removing %s: %w", s.dir, err))
		}
	}
	if s.reaper != nil { // the directory is removed, or kept on purpose
		if err := s.reaper.release(); err != nil {
			errs = append(errs, err)
		}
		s.reaper = nil
	}
	return errors.Join(errs...)
}
