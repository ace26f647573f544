package main

import (
	"context"
	"log/slog"
	"os"
	"sync/atomic"

	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/drainpipe/drainpipe/internal/config"
)

// newLogger logs JSON to stdout, where Lambda collects it, each line
// carrying the invocation's request ID. lambdacontext's own handler would
// do the latter, but it reads AWS_LAMBDA_LOG_FORMAT at package init and
// writes text unless that says JSON.
func newLogger(level slog.Level, current *invocation) *slog.Logger {
	return slog.New(requestIDHandler{slog.NewJSONHandler(os.Stdout, &slog.HandlerOptions{Level: level}), current})
}

// invocation holds the request ID of the invocation in progress. A Lambda
// process runs one invocation at a time, so lines logged without the
// invocation's context (the drain engine's) still get its ID.
type invocation struct{ id atomic.Pointer[string] }

func (i *invocation) set(id string) { i.id.Store(&id) }

func (i *invocation) get() string {
	if i == nil {
		return ""
	}
	if p := i.id.Load(); p != nil {
		return *p
	}
	return ""
}

// requestIDHandler adds request_id to records logged with a Lambda
// invocation's context, else during one.
type requestIDHandler struct {
	slog.Handler
	current *invocation
}

func (h requestIDHandler) Handle(ctx context.Context, r slog.Record) error {
	if lc, ok := lambdacontext.FromContext(ctx); ok {
		r.AddAttrs(slog.String("request_id", lc.AwsRequestID))
	} else if id := h.current.get(); id != "" {
		r.AddAttrs(slog.String("request_id", id))
	}
	return h.Handler.Handle(ctx, r)
}

func (h requestIDHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return requestIDHandler{h.Handler.WithAttrs(attrs), h.current}
}

func (h requestIDHandler) WithGroup(name string) slog.Handler {
	return requestIDHandler{h.Handler.WithGroup(name), h.current}
}

// warnUnknown logs each DRAINPIPE_ variable no setting reads: a typo would
// otherwise leave the default in force without a word.
func warnUnknown(log *slog.Logger, environ []string) {
	for _, u := range config.UnknownNames(environ) {
		log.Warn("unknown variable ignored", "name", u.Name, "closest", u.Closest)
	}
}
