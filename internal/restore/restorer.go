package restore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/awserr"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/instance"
	"github.com/drainpipe/drainpipe/internal/lifecycle"
)

// Status is how a return to service ended; the pipeline reads it as the
// handler's status of the same name.
type Status int

// Statuses.
const (
	Done Status = iota
	Ignored
	Retry
)

// Result is a return to service's outcome with a reason for the log.
type Result struct {
	Status Status
	Reason string
	Node   string // the node given back or waited for, when one was found
	// HoldFor, with Retry, asks for the message back after this long: a
	// rebalance cordon is held until then.
	HoldFor time.Duration
}

// Task is what return to service reads of a task.
type Task struct {
	InstanceID    string
	Interruptions []event.Interruption
	Hooks         []lifecycle.Hook // the lifecycle actions Drainpipe serves
	// Foreign drops the hooks of a group the instance is not in and says
	// why when the task is left with nothing to act on; nil: none is.
	Foreign func(inst instance.Instance) (string, bool)
}

// Lookups finds an instance, from its batch's answer when prepared;
// *instance.Batch fits.
type Lookups interface {
	Get(ctx context.Context, id string) (instance.Instance, bool, error)
}

// Clusters returns a Kubernetes client for a configured cluster.
type Clusters interface {
	Client(ctx context.Context, cluster string) (kubernetes.Interface, error)
}

// Config is what the operator set for return to service.
type Config struct {
	DryRun          bool
	LaunchNoWait    bool          // DRAINPIPE_LAUNCH_WAIT_READY=false
	LaunchPoll      time.Duration // how often a launch reads its node
	RebalanceHold   time.Duration
	MaxReceiveCount int
}

// Deps is what return to service needs of the pipeline.
type Deps struct {
	Lookups  Lookups
	Clusters Clusters
	// Find finds the name of the node on an instance, with an error
	// wrapping nodemap.ErrNotFound when there is none; nodemap.Find fits.
	Find   func(ctx context.Context, client kubernetes.Interface, inst instance.Instance) (string, error)
	NodeOf NodeGetter // optional: Find and a GET when nil
	// WhyIgnored says why an instance was routed to no cluster.
	WhyIgnored func(inst instance.Instance) string
	// Budget bounds a wait by the invocation's budget less the hook
	// reserve, and by the batch giving way.
	Budget func(ctx context.Context) (context.Context, context.CancelFunc)
	Clock  lifecycle.Clock
}

// NodeGetter finds the node running on an instance and returns it as read,
// returning an error wrapping nodemap.ErrNotFound when there is none.
// nodemap.Node fits.
type NodeGetter func(ctx context.Context, client kubernetes.Interface, inst instance.Instance) (*corev1.Node, error)

// node is the node on inst as read: NodeOf, or Find followed by a GET.
func (s *Restorer) node(ctx context.Context, client kubernetes.Interface, inst instance.Instance) (*corev1.Node, error) {
	if s.NodeOf != nil {
		return s.NodeOf(ctx, client, inst)
	}
	name, err := s.Find(ctx, client, inst)
	if err != nil {
		return nil, err
	}
	return client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
}

// Restorer gives nodes back and waits for launched ones. It is safe for
// concurrent use.
type Restorer struct {
	cfg Config
	Deps
}

// New returns a Restorer, or an error naming every missing dependency.
func New(cfg Config, d Deps) (*Restorer, error) {
	var errs []error
	for name, missing := range map[string]bool{"lookups": d.Lookups == nil, "clusters": d.Clusters == nil,
		"node finder": d.Find == nil, "why ignored": d.WhyIgnored == nil, "budget": d.Budget == nil, "clock": d.Clock == nil} {
		if missing {
			errs = append(errs, fmt.Errorf("missing %s", name))
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("building return to service: %w", errors.Join(errs...))
	}
	return &Restorer{cfg: cfg, Deps: d}, nil
}

func done(reason string) Result    { return Result{Status: Done, Reason: reason} }
func ignored(reason string) Result { return Result{Status: Ignored, Reason: reason} }
func retry(reason string) Result   { return Result{Status: Retry, Reason: reason} }

// retryAWS is the result of a failed AWS call the task cannot do without,
// logged as the pipeline logs one (awserr.Explain).
func retryAWS(what string, err error, log *slog.Logger) Result {
	awserr.Explain(what, err, log)
	return retry(fmt.Sprintf("%s: %v", what, err))
}
