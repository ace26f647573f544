package awsfake

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// QueueARN is the ARN of a queue URL the fake gave
// (<server URL>/<account>/<name>).
func QueueARN(url string) string {
	parts := strings.Split(url, "/")
	if len(parts) < 2 {
		return ""
	}
	return "arn:aws:sqs:" + Region + ":" + parts[len(parts)-2] + ":" + parts[len(parts)-1]
}

// Record is r as Lambda's SQS event source hands it to a function.
func Record(r Received, queueARN string) events.SQSMessage {
	sum := md5.Sum([]byte(r.Body)) // SQS's MD5OfBody
	return events.SQSMessage{
		MessageId:     r.MessageID,
		ReceiptHandle: r.ReceiptHandle,
		Body:          r.Body,
		Md5OfBody:     hex.EncodeToString(sum[:]),
		Attributes: map[string]string{
			"ApproximateReceiveCount":          strconv.Itoa(r.ReceiveCount),
			"SentTimestamp":                    strconv.FormatInt(r.SentAt.UnixMilli(), 10),
			"SenderId":                         "AIDAIENQZJOLO23YVJ4VO",
			"ApproximateFirstReceiveTimestamp": strconv.FormatInt(r.FirstReceive.UnixMilli(), 10),
		},
		MessageAttributes: map[string]events.SQSMessageAttribute{},
		EventSource:       "aws:sqs",
		EventSourceARN:    queueARN,
		AWSRegion:         Region,
	}
}

// Deliver sends each body to the queue and receives it at once, returning
// the records Lambda would hand a function: in flight, under receipt
// handles the queue issued, so tests need not invent handles the fake
// would refuse.
func (s *Server) Deliver(url string, bodies ...string) ([]events.SQSMessage, error) {
	m, err := s.model(url)
	if err != nil {
		return nil, err
	}
	out := make([]events.SQSMessage, 0, len(bodies))
	for _, body := range bodies {
		now := time.Now()
		m.mu.Lock()
		r := m.take(m.enqueue(newUUID(), body, now), now)
		if m.opts.Duplicates > 1 { // the other copies are receivable
			m.signal()
		}
		m.mu.Unlock()
		out = append(out, Record(r, QueueARN(url)))
	}
	return out, nil
}

// Redeliver receives rec's message again, as after its visibility timeout
// passed: a new receipt handle (the old one is refused from now on) and a
// receive count one higher.
func (s *Server) Redeliver(url string, rec events.SQSMessage) (events.SQSMessage, error) {
	m, err := s.model(url)
	if err != nil {
		return events.SQSMessage{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.receipts[rec.ReceiptHandle]
	if q == nil || q.receipt != rec.ReceiptHandle || !q.DeletedAt.IsZero() || q.DeadLettered || q.moving {
		return events.SQSMessage{}, fmt.Errorf("redelivering %s: %w", rec.MessageId, errInvalidReceipt)
	}
	return Record(m.take(q, time.Now()), QueueARN(url)), nil
}
