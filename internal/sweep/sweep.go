// Package sweep makes Drainpipe level-triggered: run on a schedule, it
// checks every node Drainpipe holds against what EC2 says now and repairs
// what a lost, late or never-sent notice left behind.
//
// # What one sweep does
//
//   - LIST, in every served cluster, the nodes labelled drain.LabelHeld
//     (one narrow LIST each; nothing else when nothing is held);
//   - DescribeInstanceStatus filtered on event.code (paged) for scheduled
//     stops, retirements and reboots, and one DescribeInstances for the
//     served clusters' stopped instances;
//   - one DescribeInstances (chunks of 200) for every held node's
//     instance and every instance with a scheduled event, only when there
//     are any;
//   - then, per held node, the verdict of judge: give it back exactly as
//     a restore would (drain.UncordonRead, matched on the hold it read), taint
//     it out of service as the state change would, or leave it with a
//     reason; a stopped instance's node that no notice reached is tainted
//     out of service; a scheduled event that no Health notice brought is
//     acted on through the pipeline with the scheduled-change action, once
//     (drain.AnnotationActed).
//
// Every repair is logged with its reason and counted in the Report; a
// repair means a notice was lost.
package sweep

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/instance"
	"github.com/drainpipe/drainpipe/internal/lifecycle"
	"github.com/drainpipe/drainpipe/internal/policy"
)

// DefaultMargin is how long past a threat's end a held node must still
// find its instance running before the sweep gives it back, and how old a
// hold must be before the sweep judges it at all: the notice that ends it
// normally comes first, and EC2's answers lag its events by seconds
// (DRAINPIPE_SWEEP_MARGIN's default).
const DefaultMargin = 10 * time.Minute

// Clients gives a cluster's Kubernetes client; the pipeline's Clusters fit.
type Clients interface {
	Client(ctx context.Context, cluster string) (kubernetes.Interface, error)
}

// EC2 is what a sweep asks EC2; *instance.Lookup fits.
type EC2 interface {
	Describe(ctx context.Context, ids []string) (map[string]instance.Instance, error)
	Scheduled(ctx context.Context) ([]instance.ScheduledEvent, error)
	Stopped(ctx context.Context) (map[string]instance.Instance, error)
}

var _ EC2 = (*instance.Lookup)(nil)

// Hooks tells how long a terminate lifecycle action of a group can last
// at most; *lifecycle.Client fits.
type Hooks interface {
	ActionLife(ctx context.Context, asg string, names []string) (time.Duration, error)
}

var _ Hooks = (*lifecycle.Client)(nil)

// Config tunes a Sweeper.
type Config struct {
	// Clusters are the served clusters, swept in this order.
	Clusters []string
	// DryRun logs what would be repaired and writes nothing.
	DryRun bool
	// OutOfService is DRAINPIPE_OUT_OF_SERVICE: a stopped instance's node
	// is tainted out of service only when it is on.
	OutOfService bool
	// RebalanceHold is DRAINPIPE_REBALANCE_HOLD; 0 keeps rebalance cordons.
	RebalanceHold time.Duration
	// ScheduledAction is the policy's action for a scheduled change.
	ScheduledAction policy.Action
	// Margin: see DefaultMargin (DRAINPIPE_SWEEP_MARGIN); zero gives
	// back as soon as the threat is over, negative takes DefaultMargin.
	Margin time.Duration
}

// Deps are a Sweeper's collaborators; Log and Now are optional.
type Deps struct {
	Clients Clients
	EC2     EC2
	// Actor carries out a task as the pipeline does (it is the
	// pipeline): a scheduled event nobody sent is acted on exactly as its
	// Health notice would be.
	Actor handler.Actor
	// NodeOf finds an instance's node (nodemap.Node).
	NodeOf func(ctx context.Context, client kubernetes.Interface, inst instance.Instance) (*corev1.Node, error)
	// Hooks reads a group's hooks; nil bounds every terminate hold by
	// lifecycle.MaxActionLife.
	Hooks Hooks
	Log   *slog.Logger
	Now   func() time.Time
}

// Sweeper runs sweeps. It is safe for concurrent use.
type Sweeper struct {
	cfg Config
	d   Deps
}

// New returns a Sweeper, or an error naming every missing dependency.
func New(cfg Config, d Deps) (*Sweeper, error) {
	var errs []error
	for name, missing := range map[string]bool{"clients": d.Clients == nil, "EC2": d.EC2 == nil, "actor": d.Actor == nil,
		"node finder": d.NodeOf == nil} {
		if missing {
			errs = append(errs, fmt.Errorf("missing %s", name))
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("building the sweep: %w", errors.Join(errs...))
	}
	if cfg.Margin < 0 {
		cfg.Margin = DefaultMargin
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Sweeper{cfg: cfg, d: d}, nil
}

// Repair is one thing a sweep set right (or, in a dry run, would have).
type Repair struct {
	What     string `json:"what"` // given-back, hold-ended, out-of-service, scheduled-event
	Cluster  string `json:"cluster"`
	Node     string `json:"node"`
	Instance string `json:"instanceId"`
	Reason   string `json:"reason"`
}

// The kinds of Repair.
const (
	RepairGivenBack = "given-back"
	// RepairHoldEnded: one of the node's holds was over and ended; another
	// stands and keeps the node.
	RepairHoldEnded    = "hold-ended"
	RepairOutOfService = "out-of-service"
	RepairScheduled    = "scheduled-event"
)

// Left is a held node a sweep checked and left as it is, with why.
type Left struct {
	Cluster string `json:"cluster"`
	Node    string `json:"node"`
	Reason  string `json:"reason"`
}

// Report says what one sweep found and did.
type Report struct {
	// Checked counts the held nodes judged.
	Checked int      `json:"checked"`
	Repairs []Repair `json:"repairs"`
	Left    []Left   `json:"left"`
	// Errors are what could not be checked or repaired; the sweep is
	// retried when there are any.
	Errors []string `json:"errors,omitempty"`
	// Pending is set when a scheduled event's drain asked to come back.
	Pending []string `json:"pending,omitempty"`
	DryRun  bool     `json:"dryRun,omitempty"`
}

// Count returns how many repairs of kind what the report holds.
func (r Report) Count(what string) int {
	n := 0
	for _, x := range r.Repairs {
		if x.What == what {
			n++
		}
	}
	return n
}

// Result is the report as a task's result: retried when something could
// not be checked or a drain is unfinished, done otherwise.
func (r Report) Result() handler.Result {
	summary := fmt.Sprintf("sweep: %d held nodes checked, %d given back, %d tainted out of service, %d scheduled events acted on",
		r.Checked, r.Count(RepairGivenBack), r.Count(RepairOutOfService), r.Count(RepairScheduled))
	if r.DryRun {
		summary = "dry run: " + summary + " (none written)"
	}
	if len(r.Errors)+len(r.Pending) > 0 {
		return handler.Result{Status: handler.StatusRetry,
			Reason: summary + "; retrying: " + strings.Join(slices.Concat(r.Errors, r.Pending), "; ")}
	}
	return handler.Result{Status: handler.StatusDone, Reason: summary}
}
