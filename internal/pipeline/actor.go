package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/drainpipe/drainpipe/internal/awserr"
	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/group"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/instance"
	"github.com/drainpipe/drainpipe/internal/lifecycle"
	"github.com/drainpipe/drainpipe/internal/policy"
	"github.com/drainpipe/drainpipe/internal/restore"
)

// Deps are the Actor's collaborators. Recorder, Clock and Log are optional.
type Deps struct {
	Instances  Instances
	Clusters   Clusters
	FindNode   NodeFinder
	NodeOf     NodeGetter // optional: FindNode and a GET when nil
	NewDrainer DrainerFactory
	Hooks      Hooks
	// Groups limits how many nodes of one group drain at once
	// (DRAINPIPE_GROUP_MAX_DRAINING); nil: no limit.
	Groups   *group.Limiter
	Recorder Recorder     // default NopRecorder
	Clock    Clock        // default SystemClock
	Log      *slog.Logger // default slog.Default()
}

// Actor carries out tasks: it looks the instance up, finds its node, cordons
// or drains it within the invocation's budget, and heartbeats and completes
// its lifecycle hooks. It is safe for concurrent use.
type Actor struct {
	cfg        Config
	lookups    *instance.Batch
	clusters   Clusters
	findNode   NodeFinder
	nodeOf     NodeGetter
	newDrainer DrainerFactory
	hooks      Hooks
	rec        Recorder
	clock      Clock
	log        *slog.Logger
	keeper     *lifecycle.Keeper
	lives      lives // each group's terminate action life, as first read
	restorer   *restore.Restorer
	groups     *group.Limiter
	gates      gates                                      // each prepared batch's: cordons before evictions
	parked     func()                                     // test seam: a drain waits for the rest of its batch
	waveWait   func(ctx context.Context, until time.Time) // a wave's drains, after their batch's cordons
}

// The Actor has every optional capability the handler uses.
var (
	_ handler.Actor                 = (*Actor)(nil)
	_ handler.Preparer              = (*Actor)(nil)
	_ handler.LastDeliveryCompleter = (*Actor)(nil)
	_ handler.Flusher               = (*Actor)(nil)
)

// New returns an Actor, or an error naming every missing dependency or bad
// setting.
func New(cfg Config, d Deps) (*Actor, error) {
	cfg, err := cfg.withDefaults()
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	for name, missing := range map[string]bool{
		"instances": d.Instances == nil, "clusters": d.Clusters == nil, "node finder": d.FindNode == nil,
		"drainer factory": d.NewDrainer == nil, "hooks": d.Hooks == nil,
	} {
		if missing {
			errs = append(errs, fmt.Errorf("missing %s", name))
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("building pipeline: %w", errors.Join(errs...))
	}
	if d.Recorder == nil {
		d.Recorder = NopRecorder{}
	}
	if d.Clock == nil {
		d.Clock = SystemClock{}
	}
	if d.Log == nil {
		d.Log = slog.Default()
	}
	a := &Actor{
		cfg: cfg, lookups: instance.NewBatch(d.Instances, d.Clock.Now), clusters: d.Clusters, findNode: d.FindNode, nodeOf: d.NodeOf,
		newDrainer: d.NewDrainer, hooks: d.Hooks, rec: d.Recorder, clock: d.Clock, log: d.Log, waveWait: holdUntil,
		groups: d.Groups,
	}
	a.keeper, err = lifecycle.NewKeeper(lifecycle.KeeperConfig{DryRun: cfg.DryRun, HeartbeatInterval: cfg.HeartbeatInterval,
		MaxHookAge: cfg.MaxHookAge, MaxReceiveCount: cfg.MaxReceiveCount, CompleteBackoff: cfg.CompleteBackoff},
		lifecycle.KeeperDeps{Calls: d.Hooks, Record: d.Recorder.RecordHook, Clock: d.Clock, Log: d.Log})
	if err != nil {
		return nil, fmt.Errorf("building pipeline: %w", err)
	}
	if a.restorer, err = a.newRestorer(); err != nil {
		return nil, fmt.Errorf("building pipeline: %w", err)
	}
	return a, nil
}

// Act carries out one task. Every result has a reason for the operator;
// Retry means the message should come back (the drain resumes where it
// stopped).
func (a *Actor) Act(ctx context.Context, t handler.Task) handler.Result {
	if t.Copy {
		return a.actCopy(ctx, t)
	}
	if t.InstanceID == "" && t.Reservation != "" {
		return a.actOnReservation(ctx, t)
	}
	defer a.gates.leave(t.InstanceID)
	start := a.clock.Now()
	log := a.log.With("instance_id", t.InstanceID, "action", string(t.Action),
		"kinds", strings.Join(kinds(t), ","), "receive_count", t.ReceiveCount)
	hooks := a.servedHooks(hooksOf(t), log)
	a.keeper.Acquire(ctx, hooks)
	if t.ReceiveCount > 1 {
		// An earlier delivery may have completed the action: its
		// heartbeat (Prepare's, maybe still in flight) says so before
		// any work. A first delivery's cordon does not wait for it.
		a.keeper.Answered(ctx, hooks)
	}
	var r handler.Result
	// The task leaves its batch's gate before it releases its hooks: their
	// first heartbeats may wait for the batch's cordons (Prepare).
	if why, ok := a.nothingToDo(t, hooks); ok {
		r = ignored(why)
		a.gates.leave(t.InstanceID)
		a.keeper.Release(hooks)
	} else {
		var settle, pending []hook
		r, settle = a.act(ctx, t, hooks, log)
		a.gates.leave(t.InstanceID)
		a.keeper.Release(hooks)
		r, pending = a.settleHooks(ctx, settle, r, log)
		a.keeper.Linger(ctx, pending)
		r = beforeDeadline(t, r, a.clock.Now())
	}
	elapsed := a.clock.Now().Sub(start)
	a.rec.RecordTask(t, r, elapsed)
	log.Debug("task finished", "status", statusName(r.Status), "reason", r.Reason, "node", r.Node,
		"elapsed_ms", elapsed.Milliseconds())
	return r
}

// Flush waits, until ctx ends, for the recorder's work still in flight
// (webhook messages), when it has any.
func (a *Actor) Flush(ctx context.Context) {
	if f, ok := a.rec.(interface{ Flush(context.Context) }); ok {
		f.Flush(ctx)
	}
}

// act carries the task out and returns its result with the hooks to
// settle: those the instance's own group tag does not disown.
func (a *Actor) act(ctx context.Context, t handler.Task, hooks []hook, log *slog.Logger) (handler.Result, []hook) {
	r := a.actOn(ctx, t, &hooks, log)
	return r, hooks
}

func (a *Actor) actOn(ctx context.Context, t handler.Task, hooks *[]hook, log *slog.Logger) handler.Result {
	now := a.clock.Now()
	t, step, r := Decide(t, a.cfg.Rules(), now)
	switch step {
	case StepLaunch:
		return fromRestore(a.restorer.Launch(ctx, a.returnTask(t, hooks, log), log))
	case StepRestore:
		return fromRestore(a.restorer.RestoreAndLaunch(ctx, a.returnTask(t, hooks, log), log))
	case StepIgnore:
		return r
	}
	inst, t, r, ok := a.instanceOf(ctx, t, hooks, log)
	if !ok {
		return r
	}
	p := primary(t)
	client, err := a.clusters.Client(ctx, inst.Cluster)
	if err != nil {
		return retryAWS("connecting to cluster "+inst.Cluster, err, log)
	}
	check := a.pendingCheck(t, *hooks)
	by := delivery()
	holds := holdsOf(t, by, now)
	a.recordLife(ctx, t, holds)
	req := drain.Request{Kind: string(p.Kind), EventID: p.EventID, Deadline: p.Deadline, End: p.End,
		Evict: t.Action == policy.ActionCordonAndDrain, EventTime: restore.NewestTime(t.Interruptions),
		Holds: holds, By: by, AfterCordon: a.beforeEvictions(t.InstanceID, check)}
	// A stopped instance's kubelet is gone: its evicted pods stay
	// Terminating until the node controller removes them. Evict (budgets
	// still respected) for a short while, then acknowledge, rather than
	// wait out every redelivery into the dead-letter queue.
	stopped := inst.State == "stopped" && req.Evict
	if stopped && (req.Deadline.IsZero() || req.Deadline.After(now.Add(a.cfg.StoppedWait))) {
		req.Deadline = now.Add(a.cfg.StoppedWait)
	}
	late := cordonIfLate(&req, now, stopped)
	d := a.newDrainer(client)
	on := onNode{a: a, client: client, task: t, p: p, inst: inst, log: log}
	read, cordoned, r, ok := on.find(ctx, d, req, log.With("cluster", inst.Cluster))
	if !ok {
		return r
	}
	node := on.node
	req.Node, req.Read, req.Cordoned = node, read, cordoned
	log = log.With("cluster", inst.Cluster, "node", node)
	on.log = log
	if a.cfg.DryRun {
		what := fmt.Sprintf("dry run: would %s node %s of cluster %s", verb(req), node, inst.Cluster)
		log.Info(what, "event_id", req.EventID, "deadline", req.Deadline)
		return handler.Result{Status: handler.StatusDone, Reason: what, Node: node}
	}
	dt := drainTarget{cluster: inst.Cluster, client: client, task: t, hooks: *hooks, inst: inst, stopped: stopped}
	r = a.drain(ctx, dt, d, req, log)
	if gone, ok := a.notPending(ctx, check, client, t, p, node, by, log); ok {
		*hooks = nil // over: left alone
		return gone
	}
	r.Reason = late + r.Reason
	r = on.after(ctx, r)
	r.Node = node
	return r
}

// instanceOf looks t's instance up and checks that Drainpipe acts on it
// for t: known to EC2, of a configured cluster (terminated only with
// Config.OutOfService), of the group its hooks name, and not contradicting
// t's claims, which are dropped from the task returned when EC2 belies
// them. ok is false when r is the result.
func (a *Actor) instanceOf(ctx context.Context, t handler.Task, hooks *[]hook, log *slog.Logger) (instance.Instance, handler.Task, handler.Result, bool) {
	inst, found, err := a.lookups.Get(ctx, t.InstanceID)
	switch {
	case errors.Is(err, awserr.ErrNotFound): // the instance is gone
		return inst, t, ignored(fmt.Sprintf("instance not found in EC2: %v", err)), false
	case err != nil:
		return inst, t, retryAWS("looking up instance", err, log), false
	case !found:
		return inst, t, ignored("instance not found in EC2"), false
	case inst.State == "terminated" && !a.cfg.OutOfService:
		return inst, t, ignored("stale: instance is already terminated"), false
	case inst.Cluster == "":
		return inst, t, ignored("instance ignored: " + a.whyIgnored(inst)), false
	}
	if why, foreign := a.checkGroupTag(t, inst, hooks, log); foreign {
		return inst, t, ignored(why), false
	}
	t, dropped := credible(t, inst)
	if len(t.Interruptions) == 0 {
		return inst, t, ignored(joinReasons(dropped)), false
	}
	if len(dropped) > 0 {
		log.Info("claims contradicted by EC2 dropped", "reasons", dropped)
	}
	return inst, t, handler.Result{}, true
}

// kubeReason says what to check when the API server refused the token (the
// transport has already re-signed it once): client-go says only
// "Unauthorized", and EKS says no more about why.
func kubeReason(err error) string {
	if apierrors.IsUnauthorized(err) {
		return "the API server refused the function's token (401 Unauthorized): check that the function's role is " +
			"mapped to group drainpipe (access entry or aws-auth), that the cluster name is right (a token is signed " +
			"for one cluster) and the clock (a token lasts 15 minutes): " + err.Error()
	}
	return err.Error()
}

func done(reason string) handler.Result {
	return handler.Result{Status: handler.StatusDone, Reason: reason}
}

func ignored(reason string) handler.Result {
	return handler.Result{Status: handler.StatusIgnored, Reason: reason}
}

func retry(reason string) handler.Result {
	return handler.Result{Status: handler.StatusRetry, Reason: reason}
}

func statusName(s handler.Status) string {
	switch s {
	case handler.StatusDone:
		return "done"
	case handler.StatusIgnored:
		return "ignored"
	case handler.StatusRetry:
		return "retry"
	}
	return fmt.Sprintf("status(%d)", int(s))
}
