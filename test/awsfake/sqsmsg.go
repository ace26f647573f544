package awsfake

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// The message calls of the SQS wire, over the queue models: what an
// operator's tool (drainpipe dlq) sends.

type wireMessage struct {
	MessageID     string            `json:"MessageId"`
	ReceiptHandle string            `json:"ReceiptHandle"`
	MD5OfBody     string            `json:"MD5OfBody"`
	Body          string            `json:"Body"`
	Attributes    map[string]string `json:"Attributes,omitempty"`
}

func md5Hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// receiveMessage is ReceiveMessage: 1–10 messages, long polling up to 20 s,
// the request's visibility timeout, and the system attributes when any
// are asked for.
func (s *Server) receiveMessage(w http.ResponseWriter, r *http.Request, req sqsRequest) {
	n := req.MaxNumberOfMessages
	if n == 0 {
		n = 1
	}
	if n < 1 || n > 10 || req.WaitTimeSeconds < 0 || req.WaitTimeSeconds > 20 {
		writeSQSError(w, http.StatusBadRequest, "InvalidParameterValue", "Value for parameter MaxNumberOfMessages or WaitTimeSeconds is invalid.")
		return
	}
	vis := time.Duration(-1)
	if req.VisibilityTimeout != nil {
		if *req.VisibilityTimeout < 0 || *req.VisibilityTimeout > maxVisibility {
			writeSQSError(w, http.StatusBadRequest, "InvalidParameterValue", "Value for parameter VisibilityTimeout is invalid.")
			return
		}
		vis = time.Duration(*req.VisibilityTimeout) * time.Second
	}
	got, err := s.receiveMessages(r.Context(), req.QueueURL, n, time.Duration(req.WaitTimeSeconds)*time.Second, vis)
	if err != nil {
		writeSQSError(w, http.StatusBadRequest, "QueueDoesNotExist", "The specified queue does not exist.")
		return
	}
	attrs := len(req.AttributeNames)+len(req.SystemAttributeNames) > 0
	out := struct {
		Messages []wireMessage `json:"Messages"`
	}{Messages: []wireMessage{}}
	for _, m := range got {
		wm := wireMessage{MessageID: m.MessageID, ReceiptHandle: m.ReceiptHandle, MD5OfBody: md5Hex(m.Body), Body: m.Body}
		if attrs {
			wm.Attributes = map[string]string{
				"ApproximateReceiveCount":          strconv.Itoa(m.ReceiveCount),
				"SentTimestamp":                    strconv.FormatInt(m.SentAt.UnixMilli(), 10),
				"ApproximateFirstReceiveTimestamp": strconv.FormatInt(m.FirstReceive.UnixMilli(), 10),
				"SenderId":                         "AIDAIENQZJOLO23YVJ4VO",
			}
		}
		out.Messages = append(out.Messages, wm)
	}
	writeSQS(w, out)
}

// sendMessage is SendMessage of a body (message attributes are not kept).
func (s *Server) sendMessage(w http.ResponseWriter, req sqsRequest) {
	if req.MessageBody == nil || *req.MessageBody == "" {
		writeSQSError(w, http.StatusBadRequest, "MissingParameter", "The request must contain the parameter MessageBody.")
		return
	}
	id, err := s.SendMessage(req.QueueURL, *req.MessageBody)
	if err != nil {
		writeSQSError(w, http.StatusBadRequest, "QueueDoesNotExist", "The specified queue does not exist.")
		return
	}
	writeSQS(w, map[string]string{"MessageId": id, "MD5OfMessageBody": md5Hex(*req.MessageBody)})
}

func (s *Server) deleteMessage(w http.ResponseWriter, req sqsRequest) {
	if _, err := s.model(req.QueueURL); err != nil {
		writeSQSError(w, http.StatusBadRequest, "QueueDoesNotExist", "The specified queue does not exist.")
		return
	}
	if err := s.DeleteMessage(req.QueueURL, req.ReceiptHandle); err != nil {
		code, msg := queueCode(err)
		writeSQSError(w, http.StatusBadRequest, code, msg)
		return
	}
	writeSQS(w, struct{}{})
}

// getQueueAttributes answers QueueArn, the visible message count and,
// for a queue with a dead-letter queue, RedrivePolicy (every attribute,
// whatever was asked).
func (s *Server) getQueueAttributes(w http.ResponseWriter, req sqsRequest) {
	m, err := s.model(req.QueueURL)
	if err != nil {
		writeSQSError(w, http.StatusBadRequest, "QueueDoesNotExist", "The specified queue does not exist.")
		return
	}
	attrs := map[string]string{"QueueArn": QueueARN(req.QueueURL), "ApproximateNumberOfMessages": strconv.Itoa(m.visible())}
	if m.dlq != nil {
		policy, _ := json.Marshal(map[string]any{"deadLetterTargetArn": QueueARN(s.urlOf(m.dlq)), "maxReceiveCount": m.opts.MaxReceiveCount})
		attrs["RedrivePolicy"] = string(policy)
	}
	writeSQS(w, map[string]any{"Attributes": attrs})
}

// listDeadLetterSources is ListDeadLetterSourceQueues: the queues whose
// redrive policy names this one.
func (s *Server) listDeadLetterSources(w http.ResponseWriter, req sqsRequest) {
	m, err := s.model(req.QueueURL)
	if err != nil {
		writeSQSError(w, http.StatusBadRequest, "QueueDoesNotExist", "The specified queue does not exist.")
		return
	}
	writeSQS(w, map[string][]string{"queueUrls": s.sourcesOf(m)})
}

func (s *Server) sourcesOf(dlq *queueModel) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []string{}
	for _, u := range s.queues {
		if m := s.models[u]; m != nil && m.dlq == dlq {
			out = append(out, u)
		}
	}
	return out
}

func (s *Server) urlOf(m *queueModel) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for u, have := range s.models {
		if have == m {
			return u
		}
	}
	return ""
}

// urlOfARN is the URL of the queue with that ARN, or "".
func (s *Server) urlOfARN(arn string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range s.queues {
		if QueueARN(u) == arn {
			return u
		}
	}
	return ""
}

// visible counts the messages that can be received now.
func (m *queueModel) visible() int {
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, q := range m.msgs {
		if q.DeletedAt.IsZero() && !q.DeadLettered && !q.moving && !q.visibleAt.After(now) {
			n++
		}
	}
	return n
}

// MoveTask is one StartMessageMoveTask the fake served.
type MoveTask struct {
	Handle, SourceURL, DestinationURL string // DestinationURL empty: each message's source
	Moved                             int
}

// MoveTasks returns the message-move tasks served so far.
func (s *Server) MoveTasks() []MoveTask {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]MoveTask(nil), s.moveTasks...)
}

// startMessageMoveTask is StartMessageMoveTask, done at once: every
// visible message of the dead-letter queue is sent anew (new id, sent now,
// never received: SQS treats redriven messages as new) to the destination
// or back to the queue it was dead-lettered from, and leaves the
// dead-letter queue. As SQS, it refuses a source that is no queue's
// dead-letter queue.
func (s *Server) startMessageMoveTask(w http.ResponseWriter, req sqsRequest) {
	src := s.urlOfARN(req.SourceArn)
	m, err := s.model(src)
	if err != nil {
		writeSQSError(w, http.StatusBadRequest, "ResourceNotFoundException", "The resource that you requested does not exist.")
		return
	}
	if len(s.sourcesOf(m)) == 0 {
		writeSQSError(w, http.StatusBadRequest, "InvalidParameterValue", "Source queue must be configured as a Dead Letter Queue.")
		return
	}
	var dest *queueModel
	if req.DestinationArn != "" {
		if dest, err = s.model(s.urlOfARN(req.DestinationArn)); err != nil {
			writeSQSError(w, http.StatusBadRequest, "ResourceNotFoundException", "The resource that you requested does not exist.")
			return
		}
	}
	now := time.Now()
	type move struct {
		to   *queueModel
		body string
	}
	var moves []move
	m.mu.Lock()
	for _, q := range m.msgs {
		to := dest
		if to == nil {
			to = q.from
		}
		if !q.DeletedAt.IsZero() || q.DeadLettered || q.moving || q.visibleAt.After(now) || to == nil {
			continue
		}
		q.DeletedAt = now
		moves = append(moves, move{to, q.Body})
	}
	m.mu.Unlock()
	for _, mv := range moves {
		mv.to.mu.Lock()
		mv.to.enqueue(newUUID(), mv.body, now)
		mv.to.signal()
		mv.to.mu.Unlock()
	}
	task := MoveTask{Handle: "eyJ0YXNrSWQiOiI" + randomToken(12), SourceURL: src, Moved: len(moves)}
	if dest != nil {
		task.DestinationURL = s.urlOfARN(req.DestinationArn)
	}
	s.mu.Lock()
	s.moveTasks = append(s.moveTasks, task)
	s.mu.Unlock()
	writeSQS(w, map[string]string{"TaskHandle": task.Handle})
}
