package handler

import (
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/drainpipe/drainpipe/internal/event"
)

// Record outcomes as RecordSummary reports them.
const (
	OutcomeDone     = string(outcomeDone)
	OutcomeIgnored  = string(outcomeIgnored)
	OutcomeRejected = string(outcomeRejected)
	OutcomeRetry    = string(outcomeRetry)
)

// RecordSummary is what the handler logs about one SQS record once its
// outcome is known, handed to Options.OnRecord (for metrics).
type RecordSummary struct {
	MessageID    string
	Kinds        []event.Kind
	Instances    []string
	EventIDs     []string
	ReceiveCount int
	Outcome      string // one of the Outcome constants
	Reason       string
	Duration     time.Duration
	// EventTime is the earliest time of the record's interruptions (when
	// AWS emitted them); zero when unknown (e.g. rejected records).
	EventTime time.Time
	// SentTime is when SQS received the message; zero when not reported.
	SentTime time.Time
	// Received is when the batch reached the handler.
	Received time.Time
}

// QueueLatency is how long the record waited before the handler got it:
// since its event's time, else since SQS received it; zero when neither
// is known.
func (s RecordSummary) QueueLatency() time.Duration {
	from := s.EventTime
	if from.IsZero() {
		from = s.SentTime
	}
	if from.IsZero() || s.Received.Before(from) {
		return 0
	}
	return s.Received.Sub(from)
}

func (r *record) summary(received time.Time) RecordSummary {
	return RecordSummary{
		MessageID: r.messageID, Kinds: r.kinds, Instances: r.instances, EventIDs: r.eventIDs,
		ReceiveCount: r.receiveCount, Outcome: string(r.outcome), Reason: r.reason, Duration: r.duration,
		EventTime: r.eventTime, SentTime: r.sentTime, Received: received,
	}
}

// sentTime reads SQS's SentTimestamp (milliseconds since the epoch).
func sentTime(m events.SQSMessage) time.Time {
	ms, err := strconv.ParseInt(m.Attributes["SentTimestamp"], 10, 64)
	if err != nil || ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}
