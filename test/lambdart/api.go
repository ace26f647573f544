package lambdart

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// The Runtime API's limits and header names, as aws-lambda-go uses them.
const (
	maxPayload = 6 << 20 // Lambda's synchronous response limit

	headerRequestID   = "Lambda-Runtime-Aws-Request-Id"
	headerDeadline    = "Lambda-Runtime-Deadline-Ms"
	headerFunctionARN = "Lambda-Runtime-Invoked-Function-Arn"
	headerTraceID     = "Lambda-Runtime-Trace-Id"
	headerErrorType   = "Lambda-Runtime-Function-Error-Type"
	headerErrorBody   = "Lambda-Runtime-Function-Error-Body"
	headerExtensionID = "Lambda-Extension-Identifier"
)

// ErrorBody is the error document a runtime posts to /error or /init/error.
type ErrorBody struct {
	Type       string          `json:"errorType"`
	Message    string          `json:"errorMessage"`
	StackTrace json.RawMessage `json:"stackTrace,omitempty"`
}

// InitError is returned when the bootstrap reported a failed init.
type InitError struct{ Body ErrorBody }

func (e *InitError) Error() string {
	return fmt.Sprintf("bootstrap init failed: %s: %s", e.Body.Type, e.Body.Message)
}

// invocation is one queued event and where its outcome goes.
type invocation struct {
	id       string
	payload  []byte
	deadline time.Time
	taken    chan time.Time // when the bootstrap received it
	done     chan Response  // buffered: the API handler never blocks
}

func (rt *Runtime) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /2018-06-01/runtime/invocation/next", rt.next)
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/response", rt.respond)
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/error", rt.fail)
	mux.HandleFunc("POST /2018-06-01/runtime/init/error", rt.failInit)
	// aws-lambda-go's WithEnableSIGTERM registers an internal extension;
	// serve the two calls it makes so such a bootstrap starts too.
	mux.HandleFunc("POST /2020-01-01/extension/register", rt.registerExtension)
	mux.HandleFunc("GET /2020-01-01/extension/event/next", rt.nextExtensionEvent)
	return mux
}

// next is the long poll: it answers when Invoke queues an event.
func (rt *Runtime) next(w http.ResponseWriter, r *http.Request) {
	rt.readyOnce.Do(func() {
		rt.mu.Lock()
		rt.readyAfter = time.Since(rt.startedAt)
		rt.mu.Unlock()
		close(rt.ready)
	})
	select {
	case inv := <-rt.queue:
		rt.mu.Lock()
		rt.inflight[inv.id] = inv
		rt.mu.Unlock()
		inv.taken <- time.Now()
		h := w.Header()
		h.Set(headerRequestID, inv.id)
		h.Set(headerDeadline, strconv.FormatInt(inv.deadline.UnixMilli(), 10))
		h.Set(headerFunctionARN, rt.arn)
		h.Set(headerTraceID, traceID())
		h.Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(inv.payload) // a broken connection shows up as a timeout
	case <-r.Context().Done():
		// Shutting down, Lambda leaves /next unanswered: the process is
		// signalled while it waits, and its connection dies with it.
	}
}

func (rt *Runtime) respond(w http.ResponseWriter, r *http.Request) {
	inv, body, ok := rt.claim(w, r)
	if !ok {
		return
	}
	res := Response{RequestID: inv.id, Body: body}
	// A streamed body that failed midway carries its error in trailers.
	if typ := r.Trailer.Get(headerErrorType); typ != "" {
		res.Body = nil
		res.Error = trailerError(typ, r.Trailer.Get(headerErrorBody))
	}
	inv.done <- res
	accepted(w)
}

func (rt *Runtime) fail(w http.ResponseWriter, r *http.Request) {
	inv, body, ok := rt.claim(w, r)
	if !ok {
		return
	}
	inv.done <- Response{RequestID: inv.id, Error: parseError(r.Header.Get(headerErrorType), body)}
	accepted(w)
}

func (rt *Runtime) failInit(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxPayload))
	if err != nil {
		http.Error(w, "reading body", http.StatusBadRequest)
		return
	}
	e := parseError(r.Header.Get(headerErrorType), body)
	rt.initErrOnce.Do(func() {
		rt.mu.Lock()
		rt.initErr = e
		rt.mu.Unlock()
		close(rt.initFailed)
	})
	accepted(w)
}

// claim reads a result's body and removes its invocation from the in-flight
// set, so a second answer for the same id is refused as Lambda refuses it.
func (rt *Runtime) claim(w http.ResponseWriter, r *http.Request) (*invocation, []byte, bool) {
	id := r.PathValue("id")
	body, err := io.ReadAll(io.LimitReader(r.Body, maxPayload+1))
	if err != nil {
		apiError(w, http.StatusBadRequest, "InvalidRequest", "reading body: "+err.Error())
		return nil, nil, false
	}
	rt.mu.Lock()
	inv, ok := rt.inflight[id]
	delete(rt.inflight, id)
	rt.mu.Unlock()
	if !ok {
		apiError(w, http.StatusBadRequest, "InvalidRequestID", "no invocation in flight with id "+id)
		return nil, nil, false
	}
	if len(body) > maxPayload {
		inv.done <- Response{RequestID: id, Error: &ErrorBody{Type: "Function.ResponseSizeTooLarge", Message: "response payload over 6 MB"}}
		apiError(w, http.StatusRequestEntityTooLarge, "RequestEntityTooLarge", "payload over 6 MB")
		return nil, nil, false
	}
	return inv, body, true
}

func (rt *Runtime) registerExtension(w http.ResponseWriter, r *http.Request) {
	var reg struct {
		Events []string `json:"events"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&reg); err != nil {
		apiError(w, http.StatusBadRequest, "InvalidRequest", "decoding registration: "+err.Error())
		return
	}
	rt.mu.Lock()
	rt.hasExtension = true
	rt.shutdownWanted = rt.shutdownWanted || slices.Contains(reg.Events, "SHUTDOWN")
	rt.mu.Unlock()
	w.Header().Set(headerExtensionID, newRequestID())
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{
		"functionName":    rt.opts.FunctionName,
		"functionVersion": "$LATEST",
		"handler":         "bootstrap",
	})
}

// nextExtensionEvent answers only SHUTDOWN, and only to extensions that asked
// for it; aws-lambda-go's SIGTERM extension asks for nothing and waits.
func (rt *Runtime) nextExtensionEvent(w http.ResponseWriter, r *http.Request) {
	select {
	case <-rt.closing:
	case <-r.Context().Done():
		return
	}
	rt.mu.Lock()
	wanted := rt.shutdownWanted
	rt.mu.Unlock()
	if !wanted {
		<-r.Context().Done()
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"eventType":      "SHUTDOWN",
		"shutdownReason": "spindown",
		"deadlineMs":     time.Now().Add(rt.opts.ShutdownGrace).UnixMilli(),
	})
}

// parseError accepts what runtimes send: usually the JSON document, but a
// body that is not JSON is kept as the message rather than lost.
func parseError(typ string, body []byte) *ErrorBody {
	var e ErrorBody
	if err := json.Unmarshal(body, &e); err != nil {
		e = ErrorBody{Message: string(body)}
	}
	if e.Type == "" {
		e.Type = typ
	}
	return &e
}

func trailerError(typ, encoded string) *ErrorBody {
	e := &ErrorBody{Type: typ}
	if raw, err := base64.StdEncoding.DecodeString(encoded); err == nil && len(raw) > 0 {
		e = parseError(typ, raw)
	}
	return e
}

func accepted(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	_, _ = io.WriteString(w, `{"status":"OK"}`)
}

func apiError(w http.ResponseWriter, code int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(ErrorBody{Type: typ, Message: msg})
}

// newRequestID returns a random UUID (version 4), the shape Lambda uses.
func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on Linux
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func randomHex(n int) string {
	b := make([]byte, n/2)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// traceID is an X-Ray trace header of the form Lambda sends, never sampled.
func traceID() string {
	return fmt.Sprintf("Root=1-%08x-%s;Parent=%s;Sampled=0", time.Now().Unix(), randomHex(24), randomHex(16))
}
