package awsfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"time"
)

// sqsTargetPrefix starts the X-Amz-Target header of every SQS call: the
// SDK speaks AWS JSON 1.0 to SQS (POST / with the operation in the header).
const sqsTargetPrefix = "AmazonSQS."

// VisibilityChange is one message whose visibility timeout was changed
// through the fake, in the order the changes arrived.
type VisibilityChange struct {
	QueueURL      string
	ReceiptHandle string
	Timeout       int // seconds
}

// AddQueue is CreateQueue with SQS's defaults, kept for callers that need
// no options; an existing queue is kept as it is. Like every queue of the
// fake, it refuses receipt handles it did not issue or whose message is
// not in flight: records carrying its handles come from Deliver.
func (s *Server) AddQueue(account, name string) string {
	u := s.URL() + "/" + account + "/" + name
	s.mu.Lock()
	known := s.models[u] != nil
	s.mu.Unlock()
	if known {
		return u
	}
	u, _ = s.CreateQueue(account, name, QueueOptions{}) // no dead-letter queue: cannot fail
	return u
}

// InvalidReceipts makes ChangeMessageVisibilityBatch fail the entries with
// these receipt handles (ReceiptHandleIsInvalid, as for a receipt whose
// message was deleted or received again since), the rest of the batch
// being served.
func (s *Server) InvalidReceipts(handles ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.badReceipts = append(s.badReceipts, handles...)
}

// VisibilityChanges returns every visibility change served so far.
func (s *Server) VisibilityChanges() []VisibilityChange {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.visibility)
}

type sqsEntry struct {
	ID                *string `json:"Id"`
	ReceiptHandle     *string `json:"ReceiptHandle"`
	VisibilityTimeout *int    `json:"VisibilityTimeout"`
}

type sqsRequest struct {
	MaxNumberOfMessages    int        `json:"MaxNumberOfMessages"`
	WaitTimeSeconds        int        `json:"WaitTimeSeconds"`
	AttributeNames         []string   `json:"AttributeNames"`
	SystemAttributeNames   []string   `json:"MessageSystemAttributeNames"`
	MessageBody            *string    `json:"MessageBody"`
	SourceArn              string     `json:"SourceArn"`
	DestinationArn         string     `json:"DestinationArn"`
	ReceiptHandle          string     `json:"ReceiptHandle"`
	VisibilityTimeout      *int       `json:"VisibilityTimeout"`
	QueueName              string     `json:"QueueName"`
	QueueOwnerAWSAccountID string     `json:"QueueOwnerAWSAccountId"`
	QueueURL               string     `json:"QueueUrl"`
	Entries                []sqsEntry `json:"Entries"`
}

// params flattens the request the way the query protocol would, so tests
// read every service's calls alike (Entries.1.ReceiptHandle, ...).
func (r sqsRequest) params() url.Values {
	v := url.Values{}
	set := func(k, val string) {
		if val != "" {
			v.Set(k, val)
		}
	}
	set("QueueName", r.QueueName)
	set("QueueOwnerAWSAccountId", r.QueueOwnerAWSAccountID)
	set("QueueUrl", r.QueueURL)
	set("ReceiptHandle", r.ReceiptHandle)
	set("SourceArn", r.SourceArn)
	set("DestinationArn", r.DestinationArn)
	if r.MaxNumberOfMessages != 0 {
		v.Set("MaxNumberOfMessages", strconv.Itoa(r.MaxNumberOfMessages))
	}
	if r.MessageBody != nil {
		v.Set("MessageBody", *r.MessageBody)
	}
	if r.VisibilityTimeout != nil {
		v.Set("VisibilityTimeout", strconv.Itoa(*r.VisibilityTimeout))
	}
	for i, e := range r.Entries {
		p := fmt.Sprintf("Entries.%d.", i+1)
		if e.ID != nil {
			v.Set(p+"Id", *e.ID)
		}
		if e.ReceiptHandle != nil {
			v.Set(p+"ReceiptHandle", *e.ReceiptHandle)
		}
		if e.VisibilityTimeout != nil {
			v.Set(p+"VisibilityTimeout", strconv.Itoa(*e.VisibilityTimeout))
		}
	}
	return v
}

var (
	batchEntryID  = regexp.MustCompile(`^[A-Za-z0-9_-]{1,80}$`)
	sqsQueueName  = regexp.MustCompile(`^[A-Za-z0-9_-]{1,80}(\.fifo)?$`)
	sqsAccountID  = regexp.MustCompile(`^[0-9]{12}$`)
	maxVisibility = 12 * 60 * 60 // SQS's limit, seconds
)

func (s *Server) serveSQS(w http.ResponseWriter, r *http.Request, op string, body []byte, signed bool) {
	var req sqsRequest
	if ct := r.Header.Get("Content-Type"); ct != "application/x-amz-json-1.0" {
		s.record(Call{Service: ServiceSQS, Action: op, Signed: signed, UserAgent: r.UserAgent()})
		writeSQSError(w, http.StatusBadRequest, "InvalidParameterValue", "awsfake: want Content-Type application/x-amz-json-1.0, got "+ct)
		return
	}
	if err := json.Unmarshal(body, &req); err != nil {
		s.record(Call{Service: ServiceSQS, Action: op, Signed: signed, UserAgent: r.UserAgent()})
		writeSQSError(w, http.StatusBadRequest, "SerializationException", err.Error())
		return
	}
	fault := s.record(Call{Service: ServiceSQS, Action: op, Params: req.params(), Signed: signed, UserAgent: r.UserAgent()})
	switch fault {
	case 0:
	case Throttle:
		writeSQSError(w, http.StatusBadRequest, "RequestThrottled", "Request is throttled.")
		return
	case AccessDenied:
		writeSQSError(w, http.StatusForbidden, "AccessDenied", "Access to the resource "+req.QueueURL+" is denied.")
		return
	case NotFound:
		writeSQSError(w, http.StatusBadRequest, "QueueDoesNotExist", "The specified queue does not exist.")
		return
	default:
		writeSQSError(w, http.StatusInternalServerError, "InternalError", "We encountered an internal error. Please try again.")
		return
	}
	switch op {
	case "GetQueueUrl":
		s.getQueueURL(w, req)
	case "ChangeMessageVisibilityBatch":
		s.changeVisibilityBatch(w, req)
	case "ChangeMessageVisibility":
		s.changeVisibility(w, req)
	case "ReceiveMessage":
		s.receiveMessage(w, r, req)
	case "SendMessage":
		s.sendMessage(w, req)
	case "DeleteMessage":
		s.deleteMessage(w, req)
	case "GetQueueAttributes":
		s.getQueueAttributes(w, req)
	case "ListDeadLetterSourceQueues":
		s.listDeadLetterSources(w, req)
	case "StartMessageMoveTask":
		s.startMessageMoveTask(w, req)
	default:
		writeSQSError(w, http.StatusBadRequest, "UnsupportedOperation", "awsfake: unsupported SQS operation "+op)
	}
}

func (s *Server) getQueueURL(w http.ResponseWriter, req sqsRequest) {
	if !sqsQueueName.MatchString(req.QueueName) || (req.QueueOwnerAWSAccountID != "" && !sqsAccountID.MatchString(req.QueueOwnerAWSAccountID)) {
		writeSQSError(w, http.StatusBadRequest, "InvalidParameterValue", "Value for parameter QueueName or QueueOwnerAWSAccountId is invalid.")
		return
	}
	account := req.QueueOwnerAWSAccountID
	if account == "" {
		account = "111122223333" // the caller's own account
	}
	u := s.URL() + "/" + account + "/" + req.QueueName
	s.mu.Lock()
	known := slices.Contains(s.queues, u)
	s.mu.Unlock()
	if !known {
		writeSQSError(w, http.StatusBadRequest, "QueueDoesNotExist", "The specified queue does not exist.")
		return
	}
	writeSQS(w, map[string]string{"QueueUrl": u})
}

type batchFailure struct {
	ID          string `json:"Id"`
	Code        string `json:"Code"`
	Message     string `json:"Message"`
	SenderFault bool   `json:"SenderFault"`
}

// changeVisibilityBatch keeps SQS's rules: a known queue, 1–10 entries with
// distinct well-formed IDs (else the whole call fails), and per-entry
// failures for bad receipts or timeouts.
func (s *Server) changeVisibilityBatch(w http.ResponseWriter, req sqsRequest) {
	s.mu.Lock()
	known := slices.Contains(s.queues, req.QueueURL)
	s.mu.Unlock()
	switch {
	case !known:
		writeSQSError(w, http.StatusBadRequest, "QueueDoesNotExist", "The specified queue does not exist.")
		return
	case len(req.Entries) == 0:
		writeSQSError(w, http.StatusBadRequest, "EmptyBatchRequest", "There should be at least one ChangeMessageVisibilityBatchRequestEntry in the request.")
		return
	case len(req.Entries) > 10:
		writeSQSError(w, http.StatusBadRequest, "TooManyEntriesInBatchRequest", fmt.Sprintf("Maximum number of entries per request are 10. You have sent %d.", len(req.Entries)))
		return
	}
	seen := map[string]bool{}
	for _, e := range req.Entries {
		switch id := deref(e.ID); {
		case !batchEntryID.MatchString(id):
			writeSQSError(w, http.StatusBadRequest, "InvalidBatchEntryId", "A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.")
			return
		case seen[id]:
			writeSQSError(w, http.StatusBadRequest, "BatchEntryIdsNotDistinct", "Id "+id+" repeated.")
			return
		default:
			seen[id] = true
		}
	}
	resp := struct {
		Successful []map[string]string `json:"Successful"`
		Failed     []batchFailure      `json:"Failed"`
	}{Successful: []map[string]string{}, Failed: []batchFailure{}}
	for _, e := range req.Entries {
		id := deref(e.ID)
		if code, msg := s.applyVisibility(req.QueueURL, deref(e.ReceiptHandle), e.VisibilityTimeout); code != "" {
			resp.Failed = append(resp.Failed, batchFailure{ID: id, Code: code, Message: msg, SenderFault: true})
			continue
		}
		resp.Successful = append(resp.Successful, map[string]string{"Id": id})
	}
	writeSQS(w, resp)
}

// changeVisibility is ChangeMessageVisibility: one entry, errors for the
// whole call.
func (s *Server) changeVisibility(w http.ResponseWriter, req sqsRequest) {
	s.mu.Lock()
	known := slices.Contains(s.queues, req.QueueURL)
	s.mu.Unlock()
	if !known {
		writeSQSError(w, http.StatusBadRequest, "QueueDoesNotExist", "The specified queue does not exist.")
		return
	}
	if code, msg := s.applyVisibility(req.QueueURL, req.ReceiptHandle, req.VisibilityTimeout); code != "" {
		writeSQSError(w, http.StatusBadRequest, code, msg)
		return
	}
	writeSQS(w, struct{}{})
}

// applyVisibility validates and applies one visibility change, returning
// SQS's error code and message when refused: the message's state decides,
// unless InvalidReceipts names the handle.
func (s *Server) applyVisibility(queueURL, handle string, timeout *int) (string, string) {
	s.mu.Lock()
	bad := handle == "" || slices.Contains(s.badReceipts, handle)
	m := s.models[queueURL]
	s.mu.Unlock()
	switch {
	case bad:
		return errInvalidReceipt.Code, errInvalidReceipt.Message
	case timeout == nil || *timeout < 0 || *timeout > maxVisibility:
		return "InvalidParameterValue", "Value for parameter VisibilityTimeout is invalid."
	}
	if m == nil {
		return "QueueDoesNotExist", "The specified queue does not exist."
	}
	if code, msg := queueCode(m.changeVisibility(handle, time.Duration(*timeout)*time.Second)); code != "" {
		return code, msg
	}
	s.mu.Lock()
	s.visibility = append(s.visibility, VisibilityChange{QueueURL: queueURL, ReceiptHandle: handle, Timeout: *timeout})
	s.mu.Unlock()
	return "", ""
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func writeSQS(w http.ResponseWriter, v any) {
	out, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
}

// writeSQSError answers in AWS JSON 1.0's error shape: the code as the
// body's __type (namespaced, as SQS sends it) and a message.
func writeSQSError(w http.ResponseWriter, status int, code, msg string) {
	out, err := json.Marshal(map[string]string{"__type": "com.amazonaws.sqs#" + code, "message": msg})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.WriteHeader(status)
	_, _ = w.Write(out)
}
