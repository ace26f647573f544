package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/drainpipe/drainpipe/internal/event"
)

// Hook is one lifecycle action as a task carries it: when it began, and
// the highest receive count among the records that carried it (whether it
// is on its last delivery is decided from its own records).
type Hook struct {
	event.Lifecycle
	Time         time.Time
	ReceiveCount int
}

// Calls heartbeats and completes Auto Scaling lifecycle actions; *Client
// fits. Complete reports alreadyDone when the action was no longer pending
// (completed by an earlier delivery, or timed out).
type Calls interface {
	Heartbeat(ctx context.Context, l event.Lifecycle) error
	Complete(ctx context.Context, l event.Lifecycle) (alreadyDone bool, err error)
}

var _ Calls = (*Client)(nil)

// Timeouts tells a lifecycle hook's heartbeat timeout, from Auto Scaling's
// DescribeLifecycleHooks (cached by the implementation per group and
// hook). Calls that also implement it (*Client does) set the heartbeat
// cadence and the global timeout of each hook.
type Timeouts interface {
	HeartbeatTimeout(ctx context.Context, asg, hook string) (time.Duration, error)
}

// Op names a lifecycle hook call for a recorder.
type Op string

// Lifecycle hook calls.
const (
	OpHeartbeat Op = "heartbeat"
	OpComplete  Op = "complete"
)

// Clock tells the time and makes tickers; tests inject a fake one.
type Clock interface {
	Now() time.Time
	NewTicker(d time.Duration) Ticker
}

// Ticker is the part of *time.Ticker the keeper uses.
type Ticker interface {
	C() <-chan time.Time
	Stop()
}

// KeeperConfig tunes a Keeper; every duration and count must be positive.
type KeeperConfig struct {
	// DryRun heartbeats and completes nothing (completions are logged).
	DryRun bool
	// HeartbeatInterval caps the cadence, and stands for a heartbeat
	// timeout that cannot be read.
	HeartbeatInterval time.Duration
	// MaxHookAge is how old an action may get before it is completed
	// although its drain has not finished, when its timeout is unknown.
	MaxHookAge time.Duration
	// MaxReceiveCount is the queue's: a record's last delivery.
	MaxReceiveCount int
	// CompleteBackoff spaces the attempts of a failed completion.
	CompleteBackoff time.Duration
}

// KeeperDeps are a Keeper's collaborators; all are required.
type KeeperDeps struct {
	Calls Calls
	// Record observes every call; alreadyDone is only meaningful for
	// OpComplete.
	Record func(op Op, l event.Lifecycle, alreadyDone bool, err error)
	Clock  Clock
	Log    *slog.Logger
}

// NewKeeper returns a Keeper, or an error naming every missing dependency.
func NewKeeper(cfg KeeperConfig, d KeeperDeps) (*Keeper, error) {
	var errs []error
	for name, missing := range map[string]bool{"calls": d.Calls == nil, "recorder": d.Record == nil,
		"clock": d.Clock == nil, "log": d.Log == nil} {
		if missing {
			errs = append(errs, fmt.Errorf("missing %s", name))
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("building the lifecycle keeper: %w", errors.Join(errs...))
	}
	k := &Keeper{cfg: cfg, d: d, held: map[event.Lifecycle]*held{}, groups: map[time.Duration]*beatGroup{}}
	k.timeouts, _ = d.Calls.(Timeouts)
	return k, nil
}
