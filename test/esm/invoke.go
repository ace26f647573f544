package esm

import (
	"context"
	"encoding/json"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/drainpipe/drainpipe/test/awsfake"
)

// invoke runs one batch on e and deletes what the answer says is done. It
// returns the record and whether e can take another invocation.
func (m *Mapping) invoke(ctx context.Context, e *env, batch []awsfake.Received) (Invocation, bool) {
	inv := Invocation{Env: e.idx, Start: time.Now(), Messages: len(batch)}
	for _, r := range batch {
		inv.IDs = append(inv.IDs, r.MessageID)
	}
	payload, err := json.Marshal(m.event(batch))
	if err != nil {
		inv.Outcome = "error"
		return inv, true
	}
	m.setBusy(e, true)
	res, err := e.rt.Invoke(ctx, payload, m.opts.Timeout)
	m.setBusy(e, false)
	inv.Duration = time.Since(inv.Start)
	switch {
	case err != nil: // the process died (killed) or the mapping stopped
		inv.Outcome = "crashed"
		return inv, false
	case res.TimedOut(): // lambdart killed the environment
		inv.Outcome = "timeout"
		return inv, false
	case res.Error != nil: // a function error: the whole batch is retried
		inv.Outcome = "error"
		return inv, true
	}
	failed, ok := failures(res.Body, batch)
	if !ok { // Lambda treats an unreadable answer as a failure of every item
		inv.Outcome, inv.Failed = "error", len(batch)
		return inv, true
	}
	inv.Outcome, inv.Failed = "ok", len(failed)
	if len(failed) > 0 {
		inv.Outcome = "partial"
	}
	for _, r := range batch {
		if !failed[r.MessageID] {
			// A refused delete leaves the message to come back, as on SQS.
			_ = m.opts.Fake.DeleteMessage(m.opts.QueueURL, r.ReceiptHandle)
		}
	}
	return inv, true
}

// failures reads a partial batch response: the ids to keep, and false
// when it names an id not in the batch or cannot be read. One receive
// never returns two copies of a duplicated message (awsfake's
// QueueOptions.Duplicates), but a batch window may gather both: a failure
// naming their id then keeps both, so neither is lost.
func failures(body []byte, batch []awsfake.Received) (map[string]bool, bool) {
	var resp events.SQSEventResponse
	if len(body) > 0 && string(body) != "null" {
		if err := json.Unmarshal(body, &resp); err != nil {
			return nil, false
		}
	}
	in := map[string]bool{}
	for _, r := range batch {
		in[r.MessageID] = true
	}
	failed := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		if !in[f.ItemIdentifier] {
			return nil, false
		}
		failed[f.ItemIdentifier] = true
	}
	return failed, true
}

// event is the SQS event Lambda sends for a batch.
func (m *Mapping) event(batch []awsfake.Received) events.SQSEvent {
	region := m.opts.Region
	if region == "" {
		region = awsfake.Region
	}
	ev := events.SQSEvent{Records: make([]events.SQSMessage, 0, len(batch))}
	for _, r := range batch {
		rec := awsfake.Record(r, m.opts.QueueARN)
		rec.AWSRegion = region
		ev.Records = append(ev.Records, rec)
	}
	return ev
}
