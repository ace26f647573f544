// Package drain cordons, taints and drains Kubernetes nodes. It is the only
// package that touches pods.
//
// A Run is resumable: it reads everything it needs from the cluster, so
// calling it again on a half-drained node continues where the last call
// stopped, and on a drained node it sends no write at all.
package drain

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/hold"
)

// Request asks for one node to be cordoned and, when Evict is set, drained.
type Request struct {
	Node    string
	Kind    string // interruption kind: the taint's value and an annotation
	EventID string
	// Deadline is when the instance disappears; zero when unknown. Grace
	// periods are clamped so pods finish before it.
	Deadline time.Time
	// PassedDeadline is the deadline of a threat announced after it
	// (Deadline is then zero: nothing to clamp to): recorded on the node
	// all the same, so the sweep can tell how long the instance outlived
	// it and give the node back.
	PassedDeadline time.Time
	// End is when the threat is over at the latest (a Capacity Block's
	// end, a Health window's end); zero when unknown. Recorded on the node
	// (AnnotationThreatEnd) for the sweep: no earlier give-back.
	End   time.Time
	Evict bool
	// EventTime is when AWS announced the newest threat behind the
	// request; zero when unknown. It is kept on the node (see
	// AnnotationThreatTime) so an older restore cannot undo the hold.
	EventTime time.Time
	// Read is the node as the caller has just read it, nil when it has
	// not: the cordon patches it without reading it again (its
	// resourceVersion guards the patch; a stale copy is read afresh).
	Read *corev1.Node
	// Holds are the holds the cordon adds or refreshes, one per threat of
	// the task (hold.Of); when empty, the one Kind, EventID, EventTime,
	// Deadline (or PassedDeadline) and End describe.
	Holds []hold.Hold
	// By names this delivery in the holds it takes (hold.Hold.By).
	By string
	// Cordoned says Read is the node as CordonUntouched left it: cordoned,
	// nothing for the cordon to check again.
	Cordoned bool
	// AfterCordon, when set, is called once the node is cordoned and
	// before any eviction (the pipeline holds a batch's evictions until
	// all its nodes are cordoned, and a lifecycle action's until it is
	// known to be pending). An error stops the Run there: nothing is
	// evicted, and Run returns it, wrapped.
	AfterCordon func(ctx context.Context) error
	// Yield, when set, stops the Run as its deadline would once it ends
	// (retries and waiting end), but only after each pod of the wave
	// under way has had its eviction sent: an eviction sent goes on after
	// the invocation, so the pods of a node whose batch gave way leave
	// while its record waits for an environment. A Yield ended before the
	// first eviction stops the Run there, as AfterCordon's error does.
	Yield context.Context
	// ReportBy is when the drain report's write must end at the latest:
	// the invocation's end less what completing hooks needs. The write
	// does not end with Run's context, which has usually ended when it
	// starts. Zero: DefaultReportTime from when the write starts.
	ReportBy time.Time
}

func (r Request) validate() error {
	if r.Node == "" {
		return errors.New("validating request: empty node name")
	}
	if msgs := validation.IsValidLabelValue(r.Kind); len(msgs) > 0 {
		return fmt.Errorf("validating request: kind %q is not a valid taint value: %s", r.Kind, msgs[0])
	}
	return nil
}

// Skipped is a pod left alone, with why.
type Skipped struct {
	Pod    string `json:"pod"`
	Reason string `json:"reason"`
}

// Report says what a Run did. Pods are named namespace/name; every list is
// sorted.
type Report struct {
	Node         string    `json:"node"`
	Evicted      []string  `json:"evicted,omitempty"`
	BlockedByPDB []string  `json:"blocked_by_pdb,omitempty"`
	Terminating  []string  `json:"terminating,omitempty"` // evicted (now or earlier) but not yet gone when Run stopped
	Pending      []string  `json:"pending,omitempty"`     // a later wave not started when Run stopped
	Failed       []Skipped `json:"failed,omitempty"`      // eviction refused for a reason retrying cannot fix
	// DeletedAtDeadline: blocked by a budget until the deadline drew near,
	// then deleted with what grace was left (Config.DeadlineDelete).
	DeletedAtDeadline []string `json:"deleted_at_deadline,omitempty"`
	// FinishedGrants: a budget had already granted their eviction, but the
	// deletion was cut short (a lost connection, a killed Run), leaving the
	// budget blocked until its controller gave up: deleted to finish it.
	FinishedGrants []string `json:"finished_grants,omitempty"`
	// Stuck: terminating for longer than their grace plus
	// Config.StuckAfter (a finalizer, a dead kubelet); not waited for.
	Stuck []string `json:"stuck,omitempty"`
	// Protected: karpenter.sh/do-not-disrupt pods still held, with no
	// deadline yet to delete them by (AnnotationDoNotDisrupt).
	Protected []string `json:"protected,omitempty"`
	// Blocks: every pod a disruption budget refused in this Run, with the
	// budget and the refusals.
	Blocks []Block `json:"blocks,omitempty"`
	// BlockedSince is when a budget first refused a pod it still blocks,
	// over the drain's Runs (from the node's report): how long the drain
	// has been blocked. Zero when nothing is blocked.
	BlockedSince time.Time     `json:"blocked_since,omitzero"`
	Skipped      []Skipped     `json:"skipped,omitempty"`
	Elapsed      time.Duration `json:"elapsed"`
	// ReportLost: the drain report could not be written on the node in
	// the time allowed, twice (counted in a metric; the node's report and
	// what reads it are then a Run behind).
	ReportLost bool `json:"report_lost,omitempty"`
	// Done is true when the node is cordoned and, for an evicting request,
	// no pod is left to evict or to wait for (stuck pods aside).
	Done bool `json:"done"`
}

// Drainer drains nodes of one cluster. It is safe for concurrent Runs on
// different nodes.
type Drainer struct {
	client kubernetes.Interface
	cfg    Config
	log    *slog.Logger
	now    func() time.Time
	sleep  func(context.Context, time.Duration) bool // between cordon conflicts

	emitMu sync.Mutex // serialises Config.OnEvent calls
}

// New returns a Drainer using client. Zero numeric fields of cfg take their
// defaults; a nil log discards.
func New(client kubernetes.Interface, cfg Config, log *slog.Logger) *Drainer {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Drainer{client: client, cfg: cfg.withDefaults(), log: log, now: time.Now, sleep: sleep}
}

// Run cordons the node and, for an evicting request, evicts its pods and
// waits for them to go. It stops when ctx ends or the request's deadline
// passes, returning a report with Done false (not an error): the caller
// resumes by calling Run again. Errors are for what stops a drain outright:
// an invalid request or configuration, or a node that cannot be read,
// cordoned or listed.
func (d *Drainer) Run(ctx context.Context, req Request) (Report, error) {
	start := d.now()
	rep := Report{Node: req.Node}
	if err := req.validate(); err != nil {
		return rep, err
	}
	if err := d.cfg.validate(); err != nil {
		return rep, err
	}
	log := d.log.With(slog.String("node", req.Node), slog.String("event_id", req.EventID))
	// The instance's own drains are not others' (see Pace.crowd): counted
	// before the cordon, so that a batch's drains, started together, see
	// one another's nodes as their own.
	defer d.cfg.Pace.drainingNode(req.Node)()
	prev, err := d.cordon(ctx, req, log)
	if err != nil {
		return rep, fmt.Errorf("cordoning %s: %w", req.Node, err)
	}
	if !req.Evict {
		rep.Done = true
		rep.Elapsed = d.now().Sub(start)
		return rep, nil
	}
	if req.AfterCordon != nil {
		if err := req.AfterCordon(ctx); err != nil {
			rep.Elapsed = d.now().Sub(start)
			return rep, fmt.Errorf("before evicting from %s: %w", req.Node, err)
		}
	}
	if req.Yield != nil && req.Yield.Err() != nil {
		rep.Elapsed = d.now().Sub(start)
		return rep, fmt.Errorf("before evicting from %s: %w", req.Node, context.Cause(req.Yield))
	}
	r, err := d.newRun(ctx, req, log)
	if err != nil {
		return rep, err
	}
	r.prev = prev
	r.drain(ctx)
	rep = r.report()
	rep.Elapsed = d.now().Sub(start)
	s, err := d.writeSummary(ctx, req, rep, prev, len(r.targets) > 0)
	if err != nil {
		rep.ReportLost = true
		log.Warn("drain report not kept on the node", slog.String("error", err.Error()))
	}
	if len(rep.BlockedByPDB) > 0 {
		rep.BlockedSince = s.BlockedSince()
	}
	// One line says it all: the summary as kept on the node.
	log.Info("drain stopped", slog.Bool("done", rep.Done), slog.Any("report", s))
	return rep, nil
}
