package handler

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/policy"
)

// plan is a batch parsed and grouped: one task per instance.
type plan struct {
	records []*record // records[i] is the batch's Records[i]
	tasks   []Task
}

// plan parses every record and groups their interruptions by instance, so
// each instance is handled once with the strongest action any record asked
// for, and every lifecycle hook naming it reaches the actor.
func (h *Handler) plan(msgs []events.SQSMessage, o origin) plan {
	var p plan
	byInstance := map[string]int{}
	for _, m := range msgs {
		parseStart := time.Now()
		r := &record{messageID: m.MessageId, receiveCount: receiveCount(m), sentTime: sentTime(m)}
		p.records = append(p.records, r)
		if o.err != nil {
			r.outcome, r.reason, r.duration = outcomeRetry, o.err.Error(), time.Since(parseStart)
			continue
		}
		parsed, err := event.Parse([]byte(m.Body))
		if err = h.admit(parsed, err, o); err != nil {
			r.outcome, r.reason, r.duration = outcomeRejected, err.Error(), time.Since(parseStart)
			continue
		}
		if len(parsed.Interruptions) == 0 {
			r.outcome, r.reason, r.duration = outcomeIgnored, parsed.IgnoreReason, time.Since(parseStart)
			continue
		}
		var skipped []string
		for _, in := range parsed.Interruptions {
			r.note(in)
			action := h.opts.Policy.ForInterruption(in)
			// Lifecycle hooks (terminate and launch) always reach the
			// actor: only it completes them.
			if in.Kind == event.KindSweep && !event.SweepRuleMatches(in.Rule, h.opts.SweepRule) {
				skipped = append(skipped, sweepNotOurs(in.Rule, h.opts.SweepRule))
				continue
			}
			if in.Lifecycle == nil && in.Kind != event.KindSweep {
				// A restore only takes back Drainpipe's own marks, whatever
				// the policy now says.
				if action == policy.ActionNone && !in.Restore {
					skipped = append(skipped, policy.IgnoreReason(in.Kind))
					continue
				}
			}
			if in.Lifecycle == nil {
				if why, stale := Stale(in, r.delivery(), h.opts.MaxEventAge, h.opts.Now()); stale {
					skipped = append(skipped, why)
					continue
				}
			}
			for _, id := range targets(in) {
				i, ok := byInstance[id]
				if !ok {
					i = len(p.tasks)
					byInstance[id] = i
					p.tasks = append(p.tasks, newTask(in, id))
				}
				t := &p.tasks[i]
				t.Action = policy.Strongest(t.Action, action)
				t.ReceiveCount = max(t.ReceiveCount, r.receiveCount)
				if r.sentTime.After(t.Sent) {
					t.Sent = r.sentTime
				}
				t.noteHook(in.Lifecycle, id, r.receiveCount)
				one := in
				if t.InstanceID != "" {
					one = narrow(in, id)
				}
				t.Interruptions = addInterruption(t.Interruptions, one)
				if !slices.Contains(r.tasks, i) {
					r.tasks = append(r.tasks, i)
				}
			}
		}
		if len(r.tasks) == 0 {
			r.outcome, r.reason = outcomeIgnored, strings.Join(dedupe(skipped), "; ")
			r.duration = time.Since(parseStart)
		}
	}
	return p
}

// targets are the keys of in's tasks: its instances, or the reservation a
// Capacity Block expiry names instead (reservation and instance IDs differ
// in prefix, so they share one map).
func targets(in event.Interruption) []string {
	if in.Kind == event.KindSweep {
		return []string{sweepKey}
	}
	if len(in.Instances) == 0 && in.Reservation != "" {
		return []string{in.Reservation}
	}
	return in.Instances
}

func newTask(in event.Interruption, id string) Task {
	switch {
	case id == sweepKey: // the sweep's task names no instance: see isSweep
		return Task{Action: policy.ActionNone}
	case len(in.Instances) == 0 && in.Reservation != "":
		return Task{Reservation: id, Action: policy.ActionNone}
	}
	return Task{InstanceID: id, Action: policy.ActionNone}
}

// sweepKey is the sweep's task key: every sweep message of a batch makes
// one sweep (instance and reservation IDs have other prefixes).
const sweepKey = "sweep"

// sweepNotOurs says why a Scheduled Event is not Drainpipe's sweep.
func sweepNotOurs(rule, configured string) string {
	if configured == "" {
		return fmt.Sprintf("scheduled event from rule %s, but no sweep rule is configured (DRAINPIPE_SWEEP_RULE)", rule)
	}
	return fmt.Sprintf("scheduled event from rule %s, not the sweep rule %s (DRAINPIPE_SWEEP_RULE)", rule, configured)
}

// narrow is in as it concerns one instance, so an actor sees only its own
// instance in every interruption of its task.
func narrow(in event.Interruption, id string) event.Interruption {
	in.Instances = []string{id}
	return in
}

// addInterruption appends in unless the task already has it (the same
// message delivered twice in one batch), so no hook is completed twice.
func addInterruption(list []event.Interruption, in event.Interruption) []event.Interruption {
	for _, have := range list {
		if have.Kind == in.Kind && have.EventID == in.EventID && sameHook(have.Lifecycle, in.Lifecycle) {
			return list
		}
	}
	return append(list, in)
}

func sameHook(a, b *event.Lifecycle) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Token == b.Token
}

// receiveCount reads SQS's ApproximateReceiveCount; 1 when absent.
func receiveCount(m events.SQSMessage) int {
	n, err := strconv.Atoi(m.Attributes["ApproximateReceiveCount"])
	if err != nil || n < 1 {
		return 1
	}
	return n
}

func dedupe(ss []string) []string {
	var out []string
	for _, s := range ss {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
