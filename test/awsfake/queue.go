package awsfake

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// QueueOptions shape a modelled queue (CreateQueue).
type QueueOptions struct {
	// VisibilityTimeout is the queue's default; 30 s (SQS's) when zero.
	VisibilityTimeout time.Duration
	// MaxReceiveCount is the redrive policy's maxReceiveCount: a receive
	// that finds a message already received that often moves it to
	// DeadLetterURL instead. Zero: no redrive.
	MaxReceiveCount int
	// DeadLetterURL is a queue made by CreateQueue before this one.
	DeadLetterURL string
	// Duplicates is how many copies of each message SendMessage and
	// Deliver store (SQS's at-least-once delivery); 0 or 1: one. Copies
	// share the message id and body and are otherwise apart: own receive
	// count, visibility, receipt handles, deletion and redrive. One
	// receive never returns two copies of a message.
	Duplicates int
}

// Received is one delivery of a message, as ReceiveMessage returns it.
type Received struct {
	MessageID     string
	Body          string
	ReceiptHandle string
	ReceiveCount  int       // ApproximateReceiveCount, this delivery included
	SentAt        time.Time // SentTimestamp
	FirstReceive  time.Time // ApproximateFirstReceiveTimestamp
}

// QueueError is how the queue model refuses a receipt handle; the wire
// answers its Code.
type QueueError struct{ Code, Message string }

func (e *QueueError) Error() string { return e.Code + ": " + e.Message }

var (
	errInvalidReceipt = &QueueError{"ReceiptHandleIsInvalid", "The input receipt handle is invalid."}
	errNotInFlight    = &QueueError{"MessageNotInflight", "The message referred to isn't in flight."}
)

// queueModel is one SQS standard queue: each message is visible, in
// flight until its visibility timeout passes, deleted, or dead-lettered.
type queueModel struct {
	opts QueueOptions
	dlq  *queueModel

	mu       sync.Mutex
	msgs     []*queued
	receipts map[string]*queued // every receipt handle ever issued
	wake     chan struct{}      // closed when a message may have become receivable
}

type queued struct {
	MessageState
	visibleAt time.Time
	receipt   string      // the latest
	from      *queueModel // the queue it was dead-lettered from, if any
	// moving: on its way to the dead-letter queue. It is marked
	// DeadLettered only once the dead-letter queue holds it, so a reader
	// never sees it dead-lettered yet missing there.
	moving bool
}

// CreateQueue makes a modelled queue known to GetQueueUrl and returns its
// URL (<server URL>/<account>/<name>, the shape SQS gives). ChangeMessageVisibility(Batch) on the wire acts on its
// messages and, as SQS does, refuses receipt handles that are not the
// latest of a message (ReceiptHandleIsInvalid) or whose message is not in
// flight (MessageNotInflight).
func (s *Server) CreateQueue(account, name string, o QueueOptions) (string, error) {
	if o.VisibilityTimeout == 0 {
		o.VisibilityTimeout = 30 * time.Second
	}
	m := &queueModel{opts: o, receipts: map[string]*queued{}, wake: make(chan struct{})}
	u := s.URL() + "/" + account + "/" + name
	s.mu.Lock()
	defer s.mu.Unlock()
	if o.DeadLetterURL != "" {
		if m.dlq = s.models[o.DeadLetterURL]; m.dlq == nil {
			return "", fmt.Errorf("creating queue %s: no dead-letter queue %s", name, o.DeadLetterURL)
		}
	}
	if !slices.Contains(s.queues, u) {
		s.queues = append(s.queues, u)
	}
	if s.models == nil {
		s.models = map[string]*queueModel{}
	}
	s.models[u] = m
	return u, nil
}

func (s *Server) model(url string) (*queueModel, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m := s.models[url]; m != nil {
		return m, nil
	}
	return nil, fmt.Errorf("awsfake: no modelled queue %s", url)
}

// SendMessage enqueues body and returns the message id.
func (s *Server) SendMessage(url, body string) (string, error) {
	m, err := s.model(url)
	if err != nil {
		return "", err
	}
	id := newUUID()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.enqueue(id, body, time.Now())
	m.signal()
	return id, nil
}

// enqueue stores the copies of one message sent now and returns the
// first; m.mu is held.
func (m *queueModel) enqueue(id, body string, now time.Time) *queued {
	first := len(m.msgs)
	for c := range max(1, m.opts.Duplicates) {
		m.msgs = append(m.msgs, &queued{MessageState: MessageState{ID: id, Body: body, Copy: c, SentAt: now}})
	}
	return m.msgs[first]
}

func (m *queueModel) put(q *queued) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.msgs = append(m.msgs, q)
	m.signal()
}

// signal wakes receivers; m.mu is held.
func (m *queueModel) signal() {
	close(m.wake)
	m.wake = make(chan struct{})
}

// ReceiveMessages returns up to n visible messages (1–10), waiting up to
// wait for the first (long polling). Each returned message is in flight
// for the queue's visibility timeout under a new receipt handle; one
// already received MaxReceiveCount times moves to the dead-letter queue
// instead.
func (s *Server) ReceiveMessages(ctx context.Context, url string, n int, wait time.Duration) ([]Received, error) {
	return s.receiveMessages(ctx, url, n, wait, -1)
}

// receiveMessages is ReceiveMessages with the visibility timeout of the
// messages received (negative: the queue's).
func (s *Server) receiveMessages(ctx context.Context, url string, n int, wait, vis time.Duration) ([]Received, error) {
	m, err := s.model(url)
	if err != nil {
		return nil, err
	}
	if vis < 0 {
		vis = m.opts.VisibilityTimeout
	}
	if n < 1 || n > 10 {
		return nil, fmt.Errorf("receiving from %s: %d messages asked, not in 1–10", url, n)
	}
	deadline := time.Now().Add(wait)
	for {
		out, wake, next := m.receive(n, vis)
		if len(out) > 0 || !time.Now().Before(deadline) {
			return out, nil
		}
		d := time.Until(deadline)
		if !next.IsZero() {
			d = min(d, time.Until(next))
		}
		t := time.NewTimer(max(d, time.Millisecond))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("receiving from %s: %w", url, ctx.Err())
		case <-wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// receive takes what is visible now; it also returns the channel that
// signals a change and the earliest time an in-flight message reappears.
func (m *queueModel) receive(n int, vis time.Duration) ([]Received, <-chan struct{}, time.Time) {
	now := time.Now()
	var out []Received
	var moved []*queued
	var next time.Time
	taken := map[string]bool{} // a copy of it is in out
	m.mu.Lock()
	for _, q := range m.msgs {
		if !q.DeletedAt.IsZero() || q.DeadLettered || q.moving {
			continue
		}
		if q.visibleAt.After(now) {
			if next.IsZero() || q.visibleAt.Before(next) {
				next = q.visibleAt
			}
			continue
		}
		if len(out) == n {
			break
		}
		if m.dlq != nil && m.opts.MaxReceiveCount > 0 && len(q.Receives) >= m.opts.MaxReceiveCount {
			q.moving = true
			moved = append(moved, q)
			continue
		}
		if taken[q.ID] { // left visible for another receiver
			continue
		}
		taken[q.ID] = true
		out = append(out, m.takeFor(q, now, vis))
	}
	wake := m.wake
	m.mu.Unlock()
	for _, q := range moved { // SQS keeps the id and body
		m.dlq.put(&queued{MessageState: MessageState{ID: q.ID, Body: q.Body, Copy: q.Copy, SentAt: q.SentAt}, from: m})
	}
	if len(moved) > 0 {
		m.mu.Lock()
		for _, q := range moved {
			q.DeadLettered, q.moving = true, false
		}
		m.mu.Unlock()
	}
	return out, wake, next
}

// take receives q now under a new receipt handle; m.mu is held.
func (m *queueModel) take(q *queued, now time.Time) Received {
	return m.takeFor(q, now, m.opts.VisibilityTimeout)
}

// takeFor is take with the visibility timeout vis; m.mu is held.
func (m *queueModel) takeFor(q *queued, now time.Time, vis time.Duration) Received {
	q.Receives = append(q.Receives, now)
	q.visibleAt = now.Add(vis)
	q.receipt = "AQEB" + randomToken(24)
	m.receipts[q.receipt] = q
	return Received{
		MessageID: q.ID, Body: q.Body, ReceiptHandle: q.receipt, ReceiveCount: len(q.Receives),
		SentAt: q.SentAt, FirstReceive: q.Receives[0],
	}
}

// DeleteMessage deletes the message of a receipt handle. As SQS does, a
// handle superseded by a later receive succeeds without deleting.
func (s *Server) DeleteMessage(url, receipt string) error {
	m, err := s.model(url)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.receipts[receipt]
	switch {
	case q == nil:
		return errInvalidReceipt
	case q.receipt == receipt && q.DeletedAt.IsZero():
		q.DeletedAt = time.Now()
	}
	return nil
}

// changeVisibility makes an in-flight message visible again timeout from
// now (0: at once).
func (m *queueModel) changeVisibility(receipt string, timeout time.Duration) error {
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.receipts[receipt]
	switch {
	case q == nil || q.receipt != receipt || !q.DeletedAt.IsZero() || q.DeadLettered || q.moving:
		return errInvalidReceipt
	case !q.visibleAt.After(now):
		return errNotInFlight
	}
	q.visibleAt = now.Add(timeout)
	if timeout == 0 {
		m.signal()
	}
	return nil
}

// ChangeVisibility is ChangeMessageVisibility in process (for callers on
// Lambda's side of the queue, such as an event source mapping).
func (s *Server) ChangeVisibility(url, receipt string, timeout time.Duration) error {
	m, err := s.model(url)
	if err != nil {
		return err
	}
	return m.changeVisibility(receipt, timeout)
}

// queueCode is the wire error code of a model error, or "" if it is not one.
func queueCode(err error) (string, string) {
	var qe *QueueError
	if errors.As(err, &qe) {
		return qe.Code, qe.Message
	}
	return "", ""
}

func randomToken(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on Linux
	return hex.EncodeToString(b)
}

func newUUID() string {
	h := randomToken(16)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
