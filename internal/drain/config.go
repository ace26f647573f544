package drain

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
)

// Defaults for zero Config fields and for TuneRESTConfig.
const (
	// DefaultConcurrency bounds eviction requests in flight per Run. It is
	// high because an eviction is one cheap API call and the spot warning
	// leaves two minutes for everything.
	DefaultConcurrency = 64
	// DefaultSafetyMargin is kept between a pod's SIGKILL and the
	// instance's end: kubelet latency and clock skew.
	DefaultSafetyMargin = 5 * time.Second
	// DefaultCriticalReserve is how long before the deadline the critical
	// wave starts even if ordinary pods are still going, like the kubelet's
	// shutdownGracePeriodCriticalPods.
	DefaultCriticalReserve = 15 * time.Second
	// DefaultStuckAfter is how long past its deletion grace a terminating
	// pod may linger before a Run stops waiting for it.
	DefaultStuckAfter     = time.Minute
	DefaultBackoffInitial = 100 * time.Millisecond
	DefaultBackoffMax     = 3 * time.Second
	// DefaultQPS and DefaultBurst replace client-go's 5 and 10, which
	// throttle a 110-pod drain for over 20 s.
	DefaultQPS   float32 = 200
	DefaultBurst         = 400
)

// Limits and layouts of the drain (the marks are in marks.go).
const (
	annotationTimeLayout  = time.RFC3339
	criticalPriority      = 2000000000 // system-cluster-critical and above
	minGraceSeconds       = 1          // a clamped grace never goes below this; 0 would force-delete
	defaultPodGraceSecond = corev1.DefaultTerminationGracePeriodSeconds
)

// Config tunes the drainer. Start from DefaultConfig: zero numeric fields
// take their defaults in New, but booleans are taken as given.
type Config struct {
	Concurrency int // eviction requests in flight per Run
	// Pace spaces eviction requests to the instance's share of the
	// cluster's eviction rate, shared by every Run of one cluster; nil
	// paces nothing.
	Pace           *Pace
	TaintEffect    string // NoSchedule (default when empty) or PreferNoSchedule; NoExecute is refused
	ExcludeFromLB  bool   // label the node so load balancers drop it first
	EvictUnmanaged bool   // evict pods without a controller (with a warning) instead of skipping them
	SafetyMargin   time.Duration
	// CriticalReserve: see DefaultCriticalReserve.
	CriticalReserve time.Duration
	// BackoffInitial and BackoffMax bound the jittered exponential backoff
	// between retries of a refused eviction.
	BackoffInitial time.Duration
	BackoffMax     time.Duration
	// DeadlineDelete: with a deadline, pods a disruption budget still
	// blocks two safety margins before it are deleted with the grace left
	// (the instance takes them anyway; this way they get SIGTERM).
	DeadlineDelete bool
	// StuckAfter: see DefaultStuckAfter.
	StuckAfter time.Duration
	// GraceCap, when positive, caps every pod's grace period, with or
	// without a deadline (a deadline may cut it further). Zero: each pod's
	// own.
	GraceCap time.Duration
	// NoticePeriod: pods annotated AnnotationNotice "true" are evicted
	// this long after their warning, or as late as their grace still fits
	// before the deadline when that is sooner. Zero: no notice.
	NoticePeriod time.Duration
	// WarnAll: every pod to be evicted gets the interruption annotation
	// and event before the first eviction; otherwise only pods that ask
	// (AnnotationNotice). Off by default: a warning is one more write per
	// pod, which doubles a drain's writes and its time.
	WarnAll bool
	// Announce, when set, is called before the first eviction for each
	// pod to be evicted (EventNotice, Detail the Interruption in JSON),
	// concurrently with the annotation's write; the eviction waits for it,
	// so it must bound its own time.
	Announce func(context.Context, Event)
	// OnEvent, when set, observes what a Run does as it happens. Calls are
	// serialised and must return quickly.
	OnEvent func(Event)
}

// DefaultConfig is the recommended configuration.
func DefaultConfig() Config {
	return Config{
		Concurrency:     DefaultConcurrency,
		TaintEffect:     string(corev1.TaintEffectNoSchedule),
		ExcludeFromLB:   true,
		EvictUnmanaged:  true,
		SafetyMargin:    DefaultSafetyMargin,
		CriticalReserve: DefaultCriticalReserve,
		BackoffInitial:  DefaultBackoffInitial,
		BackoffMax:      DefaultBackoffMax,
		DeadlineDelete:  true,
		StuckAfter:      DefaultStuckAfter,
	}
}

func (c Config) withDefaults() Config {
	if c.Concurrency <= 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.TaintEffect == "" {
		c.TaintEffect = string(corev1.TaintEffectNoSchedule)
	}
	if c.SafetyMargin <= 0 {
		c.SafetyMargin = DefaultSafetyMargin
	}
	if c.CriticalReserve <= 0 {
		c.CriticalReserve = DefaultCriticalReserve
	}
	if c.StuckAfter <= 0 {
		c.StuckAfter = DefaultStuckAfter
	}
	if c.BackoffInitial <= 0 {
		c.BackoffInitial = DefaultBackoffInitial
	}
	if c.BackoffMax <= 0 {
		c.BackoffMax = DefaultBackoffMax
	}
	c.BackoffMax = max(c.BackoffMax, c.BackoffInitial)
	return c
}

func (c Config) validate() error {
	switch corev1.TaintEffect(c.TaintEffect) {
	case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule:
		return nil
	case corev1.TaintEffectNoExecute:
		return ErrNoExecute
	}
	return fmt.Errorf("validating config: unknown taint effect %q", c.TaintEffect)
}

// ErrNoExecute refuses the NoExecute taint effect: the taint manager
// would delete every pod at once, without budgets, waves or a grace clamp,
// even on a cordon-only request.
var ErrNoExecute = errors.New("taint effect NoExecute is refused: the taint manager would delete every pod on the node " +
	"at once, ignoring PodDisruptionBudgets, eviction waves and grace clamping, even for a cordon-only event; " +
	"use NoSchedule or PreferNoSchedule")

// TuneRESTConfig sets the client-side rate limit of cfg for draining: zero
// values take DefaultQPS and DefaultBurst; a negative qps turns client-side
// limiting off. It clears any custom RateLimiter, which would override QPS.
func TuneRESTConfig(cfg *rest.Config, qps float32, burst int) {
	if qps == 0 {
		qps = DefaultQPS
	}
	if burst <= 0 {
		burst = DefaultBurst
	}
	cfg.QPS = qps
	cfg.Burst = burst
	cfg.RateLimiter = nil
}

// EventType names a step of a Run.
type EventType string

// The steps a Run reports through Config.OnEvent.
const (
	EventCordoned EventType = "cordoned" // Detail "unchanged" when the node already was
	EventEvicted  EventType = "evicted"  // the API accepted the eviction
	EventBlocked  EventType = "blocked"  // first disruption-budget refusal of a pod
	EventGone     EventType = "gone"     // an evicted or terminating pod left the node
	EventFailed   EventType = "failed"   // an eviction refused for good
	EventDeleted  EventType = "deleted"  // deleted at the deadline past a disruption budget
	EventNotice   EventType = "notice"   // warned before its eviction (Config.Announce only)
)

// Event is one step of a Run, for timelines and Kubernetes events.
type Event struct {
	Time   time.Time
	Type   EventType
	Node   string
	Pod    string // namespace/name; empty for node steps
	PodUID string // the pod's UID, for events about it; empty for node steps
	Detail string
	// GraceSeconds is the grace period sent with an eviction; -1 when the
	// pod's own applies.
	GraceSeconds int64
}

func (d *Drainer) emit(e Event) {
	if d.cfg.OnEvent == nil {
		return
	}
	e.Time = d.now()
	d.emitMu.Lock()
	defer d.emitMu.Unlock()
	d.cfg.OnEvent(e)
}
