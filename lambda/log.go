package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambdacontext"
)

// newLogger logs JSON to stdout, where Lambda collects it, each line
// carrying the invocation's request ID. lambdacontext's own handler would
// do the latter, but it reads AWS_LAMBDA_LOG_FORMAT at package init and
// writes text unless that says JSON.
func newLogger(level slog.Level) *slog.Logger {
	return slog.New(requestIDHandler{slog.NewJSONHandler(os.Stdout, &slog.HandlerOptions{Level: level})})
}

// requestIDHandler adds request_id to records logged with a Lambda
// invocation's context.
type requestIDHandler struct{ slog.Handler }

func (h requestIDHandler) Handle(ctx context.Context, r slog.Record) error {
	if lc, ok := lambdacontext.FromContext(ctx); ok {
		r.AddAttrs(slog.String("request_id", lc.AwsRequestID))
	}
	return h.Handler.Handle(ctx, r)
}

func (h requestIDHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return requestIDHandler{h.Handler.WithAttrs(attrs)}
}

func (h requestIDHandler) WithGroup(name string) slog.Handler {
	return requestIDHandler{h.Handler.WithGroup(name)}
}
