package pipeline

import (
	"errors"
	"fmt"
	"time"
)

// Defaults for the zero values of Config.
const (
	DefaultMaxReceiveCount = 5
	// DefaultHookReserve covers a lifecycle completion with the SDK's
	// retries after the drain stops.
	DefaultHookReserve = 5 * time.Second
	// DefaultHeartbeatInterval is below the smallest heartbeat timeout an
	// Auto Scaling hook accepts (30 s), so no hook times out while we drain,
	// whatever its setting. Heartbeats cost one API call per hook each.
	DefaultHeartbeatInterval = 25 * time.Second
	// DefaultMaxHookAge is the global timeout of a hook with the default
	// heartbeat timeout (min(48 h, 100 × 1 h)) less an hour for the queue's
	// visibility timeout between attempts.
	DefaultMaxHookAge = 47 * time.Hour
	// DefaultStoppedWait bounds a drain of a stopped instance's node: its
	// kubelet is gone, so evicted pods stay Terminating until the node
	// controller removes them and waiting longer would only end in the
	// dead-letter queue.
	DefaultStoppedWait = 30 * time.Second
	// DefaultCompleteBackoff is the pause before a failed lifecycle
	// completion's second attempt (twice it before the third).
	DefaultCompleteBackoff = 250 * time.Millisecond
	// DefaultLaunchPoll spaces the reads of a launching instance's node:
	// a kubelet registers and turns Ready within tens of seconds.
	DefaultLaunchPoll = 2 * time.Second
)

// Config tunes the pipeline. The zero value of each field means its default,
// except DryRun and MaxEventAge (zero: no age limit).
type Config struct {
	// DryRun looks instances and nodes up but writes nothing: no cordon,
	// eviction, heartbeat or hook completion. What would be done is logged.
	DryRun bool
	// MaxReceiveCount is the queue's maxReceiveCount: the delivery whose
	// ApproximateReceiveCount reaches it is the last before the DLQ, so
	// lifecycle hooks are completed on it whether or not the drain finished.
	MaxReceiveCount int
	// MaxEventAge makes a task stale (acknowledged without acting, hooks
	// completed) when on its first delivery all its interruptions are older
	// than this past their deadline, or their time when they have none: a
	// backlog must not drain nodes long since replaced. Redeliveries resume
	// work already started and are not aged out (one rule: handler.Stale).
	// The handler ages
	// interruptions other than lifecycle hooks the same way before they
	// reach the Actor.
	MaxEventAge time.Duration
	// HookReserve is kept free at the end of Act's context for completing
	// hooks: the drain stops this long before the context's deadline. The
	// handler already ends that context DRAINPIPE_DEADLINE_RESERVE before
	// the invocation's deadline, so this only covers the hook calls.
	HookReserve time.Duration
	// HeartbeatInterval caps how often lifecycle hooks are heartbeated
	// while their batch is in progress: every third of the hook's heartbeat
	// timeout, never less often than this (one heartbeat is also sent as
	// soon as the batch is planned).
	HeartbeatInterval time.Duration
	// CompleteBackoff spaces the attempts of a failed completion.
	CompleteBackoff time.Duration
	// ASGNames and ASGNamePrefix are the Auto Scaling groups whose
	// lifecycle hooks Drainpipe serves; others are left alone. Both empty
	// serves every group.
	ASGNames      []string
	ASGNamePrefix string
	// HookNames are the lifecycle hooks Drainpipe owns, by name; a served
	// group's other hooks (log shipping, backups) are left to their owner.
	// Empty serves every hook of a served group.
	HookNames []string
	// MaxHookAge is how old a lifecycle action may get before it is completed
	// even though the drain has not finished. Set it to the hook's global
	// timeout (min(48 h, 100 × heartbeat timeout)) less the queue's
	// visibility timeout.
	MaxHookAge time.Duration
	// SafetyMargin is kept back from an instance's deadline: the drain
	// stops waiting this long before the instance goes (pods' grace
	// periods are clamped to end by then too). With less than the margin
	// left, the drain uses what is left. Zero keeps none.
	SafetyMargin time.Duration
	// StoppedWait is how long a drain of a stopped instance's node evicts
	// and waits before it is acknowledged (see DefaultStoppedWait).
	StoppedWait time.Duration
	// OutOfService taints the node of an instance EC2 reports stopped, or
	// terminated with its Node object left, node.kubernetes.io/out-of-service
	// so its volumes detach and its pods move (non-graceful node shutdown).
	OutOfService bool
	// SkipKarpenter leaves nodes labelled karpenter.sh/nodepool to
	// Karpenter's own interruption handling.
	SkipKarpenter bool
	// SkipAutoMode leaves EKS Auto Mode nodes to EKS, which handles their
	// interruptions (DRAINPIPE_AUTO_MODE_NODES=skip, the default).
	SkipAutoMode bool
	// LaunchNoWait completes launch lifecycle hooks at once instead of
	// when the instance's node is Ready (DRAINPIPE_LAUNCH_WAIT_READY=false).
	LaunchNoWait bool
	// LaunchPoll is how often a launching instance's node is read while
	// its launch hook waits for it to be Ready.
	LaunchPoll time.Duration
	// RebalanceHold is how long a node cordoned only for a rebalance
	// recommendation is held before it is given back; 0 keeps it cordoned.
	RebalanceHold time.Duration
	// Clusters are the configured clusters. A batch with work builds their
	// clients while its instances are described (at most warmMax of them;
	// with more, each is built when a task first needs it).
	Clusters []string
}

// withDefaults fills zero fields and rejects nonsensical ones.
func (c Config) withDefaults() (Config, error) {
	if c.MaxReceiveCount == 0 {
		c.MaxReceiveCount = DefaultMaxReceiveCount
	}
	if c.HookReserve == 0 {
		c.HookReserve = DefaultHookReserve
	}
	if c.HeartbeatInterval == 0 {
		c.HeartbeatInterval = DefaultHeartbeatInterval
	}
	if c.MaxHookAge == 0 {
		c.MaxHookAge = DefaultMaxHookAge
	}
	if c.CompleteBackoff == 0 {
		c.CompleteBackoff = DefaultCompleteBackoff
	}
	if c.LaunchPoll <= 0 {
		c.LaunchPoll = DefaultLaunchPoll
	}
	if c.StoppedWait == 0 {
		c.StoppedWait = DefaultStoppedWait
	}
	var errs []error
	if c.MaxReceiveCount < 1 {
		errs = append(errs, fmt.Errorf("max receive count %d is below 1", c.MaxReceiveCount))
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"max event age", c.MaxEventAge},
		{"hook reserve", c.HookReserve},
		{"heartbeat interval", c.HeartbeatInterval},
		{"max hook age", c.MaxHookAge},
		{"safety margin", c.SafetyMargin},
	} {
		if d.v < 0 {
			errs = append(errs, fmt.Errorf("%s %s is negative", d.name, d.v))
		}
	}
	return c, errors.Join(errs...)
}
