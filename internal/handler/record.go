package handler

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/drainpipe/drainpipe/internal/event"
)

// outcome is how a record ends.
type outcome string

const (
	outcomeDone     outcome = "done"
	outcomeIgnored  outcome = "ignored"
	outcomeRejected outcome = "rejected"
	outcomeRetry    outcome = "retry"
)

// record is one SQS message on its way through the batch.
type record struct {
	messageID    string
	receiveCount int
	kinds        []event.Kind
	instances    []string
	eventIDs     []string
	skipped      []string // entities of its notices left out, with why
	tasks        []int    // indexes into the plan's tasks
	outcome      outcome
	reason       string
	duration     time.Duration
	eventTime    time.Time // earliest interruption time, for queue latency
	sentTime     time.Time // SQS SentTimestamp
}

// delivery is what SQS said of the record's delivery.
func (r *record) delivery() Delivery { return Delivery{ReceiveCount: r.receiveCount, Sent: r.sentTime} }

// note remembers what an interruption names, for the log.
func (r *record) note(in event.Interruption) {
	if !slices.Contains(r.kinds, in.Kind) {
		r.kinds = append(r.kinds, in.Kind)
	}
	if !in.Time.IsZero() && (r.eventTime.IsZero() || in.Time.Before(r.eventTime)) {
		r.eventTime = in.Time
	}
	if !slices.Contains(r.eventIDs, in.EventID) {
		r.eventIDs = append(r.eventIDs, in.EventID)
	}
	for _, id := range in.Instances {
		if !slices.Contains(r.instances, id) {
			r.instances = append(r.instances, id)
		}
	}
	for _, s := range in.Skipped {
		if !slices.Contains(r.skipped, s) {
			r.skipped = append(r.skipped, s)
		}
	}
}

// withSkipped is the record's reason naming every entity its notices
// left out, and why: the verdict on the others does not say it.
func (r *record) withSkipped() {
	if len(r.skipped) > 0 {
		r.reason += fmt.Sprintf("; skipped %d malformed entities: %s", len(r.skipped), strings.Join(r.skipped, "; "))
	}
}

// severity orders task statuses for a record: retry beats done beats
// ignored. A status the handler does not know is treated as retry.
func severity(s Status) int {
	switch s {
	case StatusIgnored:
		return 0
	case StatusDone:
		return 1
	default:
		return 2
	}
}

var outcomes = [...]outcome{outcomeIgnored, outcomeDone, outcomeRetry}

// settle derives the record's outcome from its tasks' results; a record
// decided at parse time keeps its outcome.
func (r *record) settle(tasks []Task, results []taskResult, start time.Time) {
	defer r.withSkipped()
	if len(r.tasks) == 0 {
		return
	}
	worst := -1
	var reasons []string
	end := start
	for _, i := range r.tasks {
		res := results[i]
		if !res.finished {
			res.Result = Result{Status: StatusRetry, Reason: "not finished before the deadline"}
		} else if res.end.After(end) {
			end = res.end
		}
		reason := res.Reason
		if reason == "" {
			reason = res.Status.String()
		}
		if len(r.tasks) > 1 {
			reason = fmt.Sprintf("%s: %s", tasks[i].InstanceID, reason)
		}
		switch sev := severity(res.Status); {
		case sev > worst:
			worst, reasons = sev, []string{reason}
		case sev == worst:
			reasons = append(reasons, reason)
		}
	}
	r.outcome = outcomes[worst]
	r.reason = strings.Join(dedupe(reasons), "; ")
	r.duration = end.Sub(start)
}

func (r *record) log(ctx context.Context, log *slog.Logger) {
	level := slog.LevelInfo
	if r.outcome == outcomeRejected || r.outcome == outcomeRetry {
		level = slog.LevelWarn
	}
	kinds := make([]string, len(r.kinds))
	for i, k := range r.kinds {
		kinds[i] = string(k)
	}
	instances := r.instances
	if instances == nil {
		instances = []string{}
	}
	log.LogAttrs(ctx, level, "record handled",
		slog.String("message_id", r.messageID),
		slog.String("kind", strings.Join(kinds, ",")),
		slog.Any("instances", instances),
		slog.String("event_id", strings.Join(r.eventIDs, ",")),
		slog.Int("receive_count", r.receiveCount),
		slog.String("outcome", string(r.outcome)),
		slog.String("reason", r.reason),
		slog.Float64("duration_ms", ms(r.duration)),
	)
}
