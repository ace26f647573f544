package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/lifecycle"
	"github.com/drainpipe/drainpipe/internal/policy"
	"github.com/drainpipe/drainpipe/internal/restore"
)

// copyMaxAge is the oldest cordon copy acted on: the cordon queue is
// there to cordon a wave's nodes in its first seconds, when the work
// queue's batches are all taken. An older copy adds nothing the work
// queue's has not done, and one that came after the notice ending its
// threat would hold the node again until the sweep: no threat Drainpipe
// gives back ends within half a minute of its notice.
const copyMaxAge = 30 * time.Second

// actCopy carries out a cordon copy (handler.Task.Copy): the node is
// cordoned, tainted and held for the task's threats, as the work queue's
// copy of the same notices would first do, and nothing else is done: no
// eviction, no hook completed, no give-back, no out-of-service taint, no
// group slot. A lifecycle action found over gives back the hold this copy
// took, as a first delivery does.
func (a *Actor) actCopy(ctx context.Context, t handler.Task) handler.Result {
	log := a.log.With("instance_id", t.InstanceID, "kinds", strings.Join(kinds(t), ","), "copy", true)
	r := a.copyOn(ctx, t, log)
	log.Debug("cordon copy finished", "status", statusName(r.Status), "reason", r.Reason, "node", r.Node)
	return r
}

func (a *Actor) copyOn(ctx context.Context, t handler.Task, log *slog.Logger) handler.Result {
	now := a.clock.Now()
	switch {
	case t.InstanceID == "":
		return ignored("a cordon copy names no instance: the work queue's copy acts on the notice")
	case !t.Sent.IsZero() && now.Sub(t.Sent) > copyMaxAge:
		return ignored(fmt.Sprintf("a cordon copy sent %s ago (over %s): the work queue's copy acts on the notice",
			now.Sub(t.Sent).Round(time.Second), copyMaxAge))
	case a.cfg.DryRun:
		return ignored("dry run: the work queue's copy says what it would do")
	}
	t, step, r := Decide(t, a.cfg.Rules(), now)
	switch step {
	case StepLaunch, StepRestore:
		return ignored("a give-back: only the work queue's copy gives a node back")
	case StepIgnore:
		return r
	}
	t.Action = policy.ActionCordon
	hooks := a.servedHooks(hooksOf(t), log)
	inst, t, r, ok := a.instanceOf(ctx, t, &hooks, log)
	if !ok {
		return r
	}
	if inst.State != "running" {
		return ignored(fmt.Sprintf("instance is %s: the work queue's copy acts on it", inst.State))
	}
	client, err := a.clusters.Client(ctx, inst.Cluster)
	if err != nil {
		return retryAWS("connecting to cluster "+inst.Cluster, err, log)
	}
	p, by := primary(t), delivery()
	req := drain.Request{Kind: string(p.Kind), EventID: p.EventID, Deadline: p.Deadline, End: p.End,
		EventTime: restore.NewestTime(t.Interruptions), Holds: holdsOf(t, by, now), By: by}
	late := cordonIfLate(&req, now, false)
	d := a.newDrainer(client)
	log = log.With("cluster", inst.Cluster)
	on := onNode{a: a, client: client, task: t, p: p, inst: inst, log: log}
	read, cordoned, r, ok := on.find(ctx, d, req, log)
	if !ok {
		return r
	}
	node := on.node
	if !cordoned {
		req.Node, req.Read = node, read
		if _, err := d.Run(ctx, req); err != nil {
			if isNotFound(err) {
				return done(fmt.Sprintf("node %s disappeared", node))
			}
			return retry(fmt.Sprintf("cordoning node %s: %v", node, err))
		}
	}
	if gone, over := a.copyOver(ctx, client, t, hooks, p, node, by, log); over {
		return gone
	}
	return handler.Result{Status: handler.StatusDone, Node: node,
		Reason: late + fmt.Sprintf("cordoned node %s (a cordon copy: the work queue's copy does the rest)", node)}
}

// copyOver asks Auto Scaling, for a task of lifecycle actions alone,
// whether any is still active (a heartbeat, which only extends it); when
// none is, the hold this copy took is given back (an earlier delivery's
// stands) and over is true.
func (a *Actor) copyOver(ctx context.Context, client kubernetes.Interface, t handler.Task, hooks []hook, p event.Interruption, node, by string, log *slog.Logger) (handler.Result, bool) {
	if len(hooks) == 0 || !onlyHooks(t) {
		return handler.Result{}, false
	}
	for _, h := range hooks {
		if err := a.hooks.Heartbeat(ctx, h.Lifecycle); !errors.Is(err, lifecycle.ErrInactive) {
			return handler.Result{}, false // active, or unknown: the hold stands
		}
	}
	return handler.Result{Status: handler.StatusIgnored, Node: node,
		Reason: whyNotPending + "; " + restore.Unevicted(ctx, client, node, p, by, log)}, true
}

// copies reports a batch of cordon copies.
func copies(tasks []handler.Task) bool {
	return len(tasks) > 0 && tasks[0].Copy
}

// copyIDs are the instances a batch of copies looks up.
func copyIDs(tasks []handler.Task) []string {
	var ids []string
	for _, t := range tasks {
		if t.InstanceID != "" && acts(t.Action) {
			ids = append(ids, t.InstanceID)
		}
	}
	return ids
}
