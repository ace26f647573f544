// Package notify posts a Slack-compatible message ({"text": ...}) to a
// webhook for every interruption Drainpipe handled on a node. The webhook
// URL is a secret: it is read by ARN from Secrets Manager or SSM Parameter
// Store (never from the plain environment), cached per container, and
// never logged. A failing webhook is logged and counted, never fails or
// retries the drain.
package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/drainpipe/drainpipe/internal/drain"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/notify/webhook"
	"github.com/drainpipe/drainpipe/internal/pipeline"
)

// DefaultTimeout bounds one notification, secret read included.
const DefaultTimeout = 3 * time.Second

// URLSource gives the webhook URL; *Secret satisfies it.
type URLSource interface {
	URL(ctx context.Context) (*url.URL, error)
}

// Options tune a Notifier.
type Options struct {
	Timeout time.Duration // per notification; DefaultTimeout when zero
	Client  *http.Client  // a client with Timeout when nil
	// OnError observes every failed notification (metrics).
	OnError func(error)
	Log     *slog.Logger
	// Template, when set, gives each message's body from webhook.Data
	// (parsed by webhook.ParseTemplate); nil sends {"text": ...}.
	Template *webhook.Template
	// Headers are set on every request; Content-Type is application/json
	// unless they give one.
	Headers http.Header
}

// Notifier posts messages to the webhook. As a pipeline.Recorder it sends
// one message per task that acted on a node. It is safe for concurrent use.
type Notifier struct {
	src  URLSource
	opts Options

	mu      sync.Mutex
	pending map[string]string // cluster of drains awaiting their task, by node

	sending sync.WaitGroup // messages in flight
}

var _ pipeline.Recorder = (*Notifier)(nil)

// New returns a Notifier posting to the URL src gives.
func New(src URLSource, o Options) *Notifier {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Client == nil {
		o.Client = &http.Client{
			Timeout: o.Timeout,
			// A webhook answers; it does not send us elsewhere.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	if o.OnError == nil {
		o.OnError = func(error) {}
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &Notifier{src: src, opts: o, pending: map[string]string{}}
}

// Send posts {"text": text}. Errors never contain the URL.
func (n *Notifier) Send(ctx context.Context, text string) error {
	return n.post(ctx, func(Extras) ([]byte, error) { return textBody(text) })
}

// SendData posts the message d makes: through the template when one is
// set, else {"text": d.Text}.
func (n *Notifier) SendData(ctx context.Context, d webhook.Data) error {
	return n.post(ctx, func(x Extras) ([]byte, error) { return n.Render(d, x) })
}

// Render is the body for d, with the routing key x carries.
func (n *Notifier) Render(d webhook.Data, x Extras) ([]byte, error) {
	if n.opts.Template == nil {
		return textBody(d.Text)
	}
	d.RoutingKey = x.RoutingKey
	return webhook.Render(n.opts.Template, d)
}

func textBody(text string) ([]byte, error) {
	b, err := json.Marshal(map[string]string{"text": text})
	if err != nil {
		return nil, fmt.Errorf("encoding notification: %w", err)
	}
	return b, nil
}

// extrasSource is a URLSource that also holds headers and a routing key
// (*Secret).
type extrasSource interface{ Extras() Extras }

// post sends the body made for the source's extras, with the configured
// headers, then the secret's.
func (n *Notifier) post(ctx context.Context, body func(Extras) ([]byte, error)) error {
	ctx, cancel := context.WithTimeout(ctx, n.opts.Timeout)
	defer cancel()
	u, err := n.src.URL(ctx)
	if err != nil {
		return err
	}
	var x Extras
	if es, ok := n.src.(extrasSource); ok {
		x = es.Extras()
	}
	b, err := body(x)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(b))
	if err != nil {
		return errors.New("building the webhook request failed")
	}
	for k, v := range n.opts.Headers {
		req.Header[k] = v
	}
	for k, v := range x.Headers {
		req.Header[k] = v
	}
	if req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := n.opts.Client.Do(req)
	if err != nil {
		var ue *url.Error // its message quotes the URL, and the URL is the secret
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("posting to the webhook: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("posting to the webhook: status %s", resp.Status)
	}
	return nil
}

// RecordDrain remembers the drain's cluster for the task's message.
func (n *Notifier) RecordDrain(cluster string, r drain.Report) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.pending[r.Node] = cluster
}

// RecordTask sends one message for a task that acted on a node (done, or
// to be retried), bounded by Options.Timeout. It does not wait for it: a
// slow webhook must not hold the task past the batch's cut-off, which would
// retry a record whose work is done. Failures are logged and reported to
// OnError only. Flush waits for the messages.
func (n *Notifier) RecordTask(t handler.Task, r handler.Result, elapsed time.Duration) {
	n.mu.Lock()
	cluster, drained := n.pending[r.Node]
	delete(n.pending, r.Node)
	n.mu.Unlock()
	if !drained || r.Node == "" || r.Status == handler.StatusIgnored {
		return
	}
	d := TemplateData(t, r, cluster, elapsed)
	if n.opts.Template == nil {
		d.Text = Message(t, r, cluster, elapsed) // Slack-escaped
	}
	n.sending.Go(func() {
		if err := n.SendData(context.Background(), d); err != nil {
			n.opts.Log.Warn("notifying the webhook", "instance_id", t.InstanceID, "node", r.Node, "error", err.Error())
			n.opts.OnError(err)
		}
	})
}

// Flush waits until every message recorded so far is sent or has failed,
// or until ctx ends (the rest may still go later). The handler calls it
// once the batch's outcomes are settled, before answering.
func (n *Notifier) Flush(ctx context.Context) {
	done := make(chan struct{})
	go func() {
		n.sending.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// RecordHook does nothing: hook calls are in the task's message.
func (n *Notifier) RecordHook(pipeline.HookOp, event.Lifecycle, bool, error) {}

// Message is the text sent for a task.
func Message(t handler.Task, r handler.Result, cluster string, elapsed time.Duration) string {
	return slackEscaper.Replace(plainMessage(t, r, cluster, elapsed))
}

// first is the task's interruption whose deadline comes first (else its
// first one): the one a message speaks of.
func first(t handler.Task) event.Interruption {
	var out event.Interruption
	for i, in := range t.Interruptions {
		if i == 0 || (!in.Deadline.IsZero() && (out.Deadline.IsZero() || in.Deadline.Before(out.Deadline))) {
			out = in
		}
	}
	return out
}

// plainMessage is Message before Slack's escaping.
func plainMessage(t handler.Task, r handler.Result, cluster string, elapsed time.Duration) string {
	in := first(t)
	kind, eventID, deadline := in.Kind, in.EventID, in.Deadline
	status := "done"
	if r.Status == handler.StatusRetry {
		status = "not finished, will retry"
	}
	s := fmt.Sprintf("Drainpipe: %s on instance %s, node %s (cluster %s)", kind, t.InstanceID, r.Node, cluster)
	if !deadline.IsZero() {
		s += ", deadline " + deadline.UTC().Format(time.RFC3339)
	}
	s += fmt.Sprintf(" — %s in %s: %s", status, elapsed.Round(time.Millisecond), r.Reason)
	if eventID != "" {
		s += " (event " + eventID + ")"
	}
	return s
}

// slackEscaper escapes the characters Slack reads as control sequences
// (<!channel>, <url|text>, entities), as its message formatting asks.
var slackEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
