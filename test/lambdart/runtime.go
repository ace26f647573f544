// Package lambdart runs a real Lambda bootstrap locally: it serves the Lambda
// Runtime API on 127.0.0.1, starts the bootstrap as a child process with the
// environment Lambda gives a provided.al2023 function, and lets a test invoke
// it and read its logs. It stands in for the Runtime Interface Emulator, which
// cannot be built here.
package lambdart

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Options configure one runtime.
type Options struct {
	// Bootstrap is the path of the executable to run. Required.
	Bootstrap string
	// Env is appended to the Lambda-like environment; a later entry wins,
	// so it can override any default (AWS_REGION, credentials...).
	Env []string
	// Stdout, when set, receives a copy of the process's stdout and stderr.
	Stdout io.Writer
	// FunctionName defaults to "drainpipe-local".
	FunctionName string
	// MemoryMB is reported in AWS_LAMBDA_FUNCTION_MEMORY_SIZE; default 128.
	MemoryMB int
	// Region defaults to "us-east-1".
	Region string
	// ShutdownGrace is how long Close waits after SIGTERM before SIGKILL when
	// the bootstrap registered an extension (Lambda only sends SIGTERM then);
	// default 500ms.
	ShutdownGrace time.Duration
}

// Runtime is a running bootstrap and the Runtime API serving it.
type Runtime struct {
	opts      Options
	addr      string
	arn       string
	srv       *http.Server
	cmd       *exec.Cmd
	startedAt time.Time
	logs      *lineLog

	queue   chan *invocation
	closing chan struct{}

	mu             sync.Mutex
	inflight       map[string]*invocation
	initErr        *ErrorBody
	readyAfter     time.Duration
	hasExtension   bool
	shutdownWanted bool
	ready          chan struct{}
	initFailed     chan struct{}
	exited         chan struct{}
	state          *os.ProcessState
	readyOnce      sync.Once
	initErrOnce    sync.Once
	closeOnce      sync.Once
	closeErr       error
	serveFinished  chan struct{}
}

// Start is Launch for tests: it fails t on error, closes the runtime when the
// test ends and, if the test failed and Options.Stdout is nil, logs what the
// bootstrap printed.
func Start(t testing.TB, opts Options) *Runtime {
	t.Helper()
	rt, err := Launch(context.Background(), opts)
	if err != nil {
		t.Fatalf("starting bootstrap: %v", err)
	}
	t.Cleanup(func() {
		if err := rt.Close(); err != nil {
			t.Errorf("closing runtime: %v", err)
		}
		if t.Failed() && opts.Stdout == nil { // else the output was seen already
			for _, l := range rt.Logs() {
				t.Logf("bootstrap: %s", l)
			}
		}
	})
	return rt
}

// Launch serves the Runtime API on 127.0.0.1 and starts the bootstrap. The
// caller must Close the runtime. ctx bounds only the start itself.
func Launch(ctx context.Context, opts Options) (*Runtime, error) {
	if opts.Bootstrap == "" {
		return nil, errors.New("starting runtime: no bootstrap path")
	}
	bootstrap, err := filepath.Abs(opts.Bootstrap)
	if err != nil {
		return nil, fmt.Errorf("resolving bootstrap path: %w", err)
	}
	opts = withDefaults(opts)
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening for the runtime API: %w", err)
	}
	rt := &Runtime{
		opts:          opts,
		addr:          ln.Addr().String(),
		arn:           fmt.Sprintf("arn:aws:lambda:%s:123456789012:function:%s", opts.Region, opts.FunctionName),
		logs:          newLineLog(opts.Stdout),
		queue:         make(chan *invocation),
		closing:       make(chan struct{}),
		inflight:      make(map[string]*invocation),
		ready:         make(chan struct{}),
		initFailed:    make(chan struct{}),
		exited:        make(chan struct{}),
		serveFinished: make(chan struct{}),
	}
	rt.srv = &http.Server{Handler: rt.routes(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(rt.serveFinished)
		_ = rt.srv.Serve(ln) // returns when Close shuts the server
	}()

	cmd := exec.Command(bootstrap)
	cmd.Dir = filepath.Dir(bootstrap)
	cmd.Env = append(lambdaEnv(opts, rt.addr, filepath.Dir(bootstrap)), opts.Env...)
	cmd.Stdout = rt.logs.writer()
	cmd.Stderr = rt.logs.writer()
	rt.cmd = cmd
	rt.mu.Lock() // the API server is already up and reads it
	rt.startedAt = time.Now()
	rt.mu.Unlock()
	if err := cmd.Start(); err != nil {
		_ = rt.srv.Close()
		return nil, fmt.Errorf("starting %s: %w", bootstrap, err)
	}
	go func() {
		_ = cmd.Wait() // the outcome is read from ProcessState
		rt.mu.Lock()
		rt.state = cmd.ProcessState
		rt.mu.Unlock()
		rt.logs.flush()
		close(rt.exited)
	}()
	return rt, nil
}

func withDefaults(o Options) Options {
	if o.FunctionName == "" {
		o.FunctionName = "drainpipe-local"
	}
	if o.MemoryMB == 0 {
		o.MemoryMB = 128
	}
	if o.Region == "" {
		o.Region = "us-east-1"
	}
	if o.ShutdownGrace == 0 {
		o.ShutdownGrace = 500 * time.Millisecond
	}
	return o
}

// lambdaEnv is the environment Lambda documents for provided.al2023; the
// credentials are placeholders so no SDK ever finds the host's own.
func lambdaEnv(o Options, addr, taskRoot string) []string {
	name := o.FunctionName
	return []string{
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"LANG=en_US.UTF-8",
		"TZ=:UTC",
		"LAMBDA_TASK_ROOT=" + taskRoot,
		"LAMBDA_RUNTIME_DIR=/var/runtime",
		"_HANDLER=bootstrap",
		"AWS_LAMBDA_RUNTIME_API=" + addr,
		"AWS_LAMBDA_FUNCTION_NAME=" + name,
		fmt.Sprintf("AWS_LAMBDA_FUNCTION_MEMORY_SIZE=%d", o.MemoryMB),
		"AWS_LAMBDA_FUNCTION_VERSION=$LATEST",
		"AWS_LAMBDA_INITIALIZATION_TYPE=on-demand",
		"AWS_LAMBDA_LOG_GROUP_NAME=/aws/lambda/" + name,
		"AWS_LAMBDA_LOG_STREAM_NAME=" + time.Now().UTC().Format("2006/01/02") + "/[$LATEST]" + randomHex(16),
		"AWS_REGION=" + o.Region,
		"AWS_DEFAULT_REGION=" + o.Region,
		"AWS_ACCESS_KEY_ID=AKIDLAMBDARTLOCAL",
		"AWS_SECRET_ACCESS_KEY=lambdart-local-placeholder",
		"AWS_SESSION_TOKEN=lambdart-local-placeholder",
		// Not set by Lambda; keeps an SDK from probing the instance metadata
		// service of whatever host runs the tests.
		"AWS_EC2_METADATA_DISABLED=true",
	}
}

// Addr is the Runtime API's host:port (the AWS_LAMBDA_RUNTIME_API value).
func (rt *Runtime) Addr() string { return rt.addr }

// FunctionARN is the ARN sent with every invocation.
func (rt *Runtime) FunctionARN() string { return rt.arn }

// PID is the bootstrap's process id.
func (rt *Runtime) PID() int { return rt.cmd.Process.Pid }

// Ready waits until the bootstrap first asks for an invocation and returns
// the time from exec to that request: Lambda's init phase. It fails if the
// bootstrap reports an init error or exits first.
func (rt *Runtime) Ready(ctx context.Context) (time.Duration, error) {
	select {
	case <-rt.ready:
		rt.mu.Lock()
		defer rt.mu.Unlock()
		return rt.readyAfter, nil
	case <-rt.initFailed:
		return 0, &InitError{Body: *rt.InitError()}
	case <-rt.exited:
		return 0, fmt.Errorf("waiting for the first invocation request: %w", rt.exitError())
	case <-ctx.Done():
		return 0, fmt.Errorf("waiting for the first invocation request: %w", ctx.Err())
	}
}

// InitError is what the bootstrap posted to /runtime/init/error, or nil.
func (rt *Runtime) InitError() *ErrorBody {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.initErr == nil {
		return nil
	}
	e := *rt.initErr
	return &e
}

// Exited is closed when the bootstrap process has exited.
func (rt *Runtime) Exited() <-chan struct{} { return rt.exited }

// Wait waits for the bootstrap to exit and returns its final state. The
// error is ctx's only: a non-zero exit is read from the state.
func (rt *Runtime) Wait(ctx context.Context) (*os.ProcessState, error) {
	select {
	case <-rt.exited:
		rt.mu.Lock()
		defer rt.mu.Unlock()
		return rt.state, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the bootstrap to exit: %w", ctx.Err())
	}
}

// exitError describes an exit for callers that expected the process alive.
func (rt *Runtime) exitError() error {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return fmt.Errorf("%w (%s)", ErrExited, rt.state)
}

// ErrExited reports that the bootstrap process is gone.
var ErrExited = errors.New("bootstrap exited")

// Close stops the bootstrap (SIGTERM first if it registered an extension, as
// Lambda does, then SIGKILL), waits for it and stops the API server. It is
// safe to call more than once.
func (rt *Runtime) Close() error {
	rt.closeOnce.Do(func() {
		close(rt.closing)
		rt.mu.Lock()
		graceful := rt.hasExtension
		rt.mu.Unlock()
		if graceful {
			_ = rt.cmd.Process.Signal(syscall.SIGTERM) // it may be gone already
			select {
			case <-rt.exited:
			case <-time.After(rt.opts.ShutdownGrace):
			}
		}
		_ = rt.cmd.Process.Kill() // errors only if it already exited
		<-rt.exited
		if err := rt.srv.Close(); err != nil {
			rt.closeErr = fmt.Errorf("closing the runtime API server: %w", err)
		}
		<-rt.serveFinished
	})
	return rt.closeErr
}
