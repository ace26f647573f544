package pipeline

import (
	"context"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/instance"
	"github.com/drainpipe/drainpipe/internal/lifecycle"
)

// Instances describes EC2 instances; ids missing from the answer do not
// exist. *instance.Lookup satisfies it.
type Instances = instance.Describer

// Clusters returns a Kubernetes client for a configured cluster (EKS, or a
// local kubeconfig).
type Clusters interface {
	Client(ctx context.Context, cluster string) (kubernetes.Interface, error)
}

// NodeFinder finds the node running on an instance, returning an error
// wrapping nodemap.ErrNotFound when there is none. nodemap.Find fits.
type NodeFinder func(ctx context.Context, client kubernetes.Interface, inst instance.Instance) (string, error)

// Drainer cordons and drains one node; *drain.Drainer satisfies it.
type Drainer interface {
	Run(ctx context.Context, req drain.Request) (drain.Report, error)
}

// DrainerFactory builds a Drainer for one cluster's client, e.g.
//
//	func(c kubernetes.Interface) pipeline.Drainer { return drain.New(c, cfg, log) }
type DrainerFactory func(client kubernetes.Interface) Drainer

// Hooks heartbeats and completes Auto Scaling lifecycle actions; when it
// also tells their heartbeat timeouts (lifecycle.Timeouts), they set the
// heartbeat cadence and each hook's global timeout.
type Hooks = lifecycle.Calls

// HookOp names a lifecycle hook call for a Recorder.
type HookOp = lifecycle.Op

// Lifecycle hook calls.
const (
	HookHeartbeat = lifecycle.OpHeartbeat
	HookComplete  = lifecycle.OpComplete
)

// Recorder observes outcomes, e.g. for metrics. Its methods must be safe for
// concurrent use and return quickly.
type Recorder interface {
	// RecordTask is called once per Act with its result.
	RecordTask(t handler.Task, r handler.Result, elapsed time.Duration)
	// RecordDrain is called after every drain run.
	RecordDrain(cluster string, r drain.Report)
	// RecordHook is called after every hook call; alreadyDone is only
	// meaningful for HookComplete.
	RecordHook(op HookOp, l event.Lifecycle, alreadyDone bool, err error)
}

// NopRecorder records nothing.
type NopRecorder struct{}

// RecordTask does nothing.
func (NopRecorder) RecordTask(handler.Task, handler.Result, time.Duration) {}

// RecordDrain does nothing.
func (NopRecorder) RecordDrain(string, drain.Report) {}

// RecordHook does nothing.
func (NopRecorder) RecordHook(HookOp, event.Lifecycle, bool, error) {}

// Clock tells the time and makes tickers; tests inject a fake one.
type Clock = lifecycle.Clock

// Ticker is the part of *time.Ticker the pipeline uses.
type Ticker = lifecycle.Ticker

// SystemClock is the real clock.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// NewTicker returns a time.Ticker.
func (SystemClock) NewTicker(d time.Duration) Ticker { return systemTicker{time.NewTicker(d)} }

type systemTicker struct{ t *time.Ticker }

func (s systemTicker) C() <-chan time.Time { return s.t.C }
func (s systemTicker) Stop()               { s.t.Stop() }
