package handler

import (
	"context"
	"fmt"

	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/drainpipe/drainpipe/internal/event"
)

// origin is the account and region the invocation's function ARN names;
// err is set when Lambda gave an ARN that cannot be read, and then every
// record is retried rather than trusted or dropped.
type origin struct {
	event.Origin
	err error
}

type originKey struct{}

// WithOrigin gives the handler, outside Lambda (`drainpipe run`), the
// origin to hold events to: what it knows of the function's partition,
// account and region (an empty field compares nothing).
func WithOrigin(ctx context.Context, o event.Origin) context.Context {
	return context.WithValue(ctx, originKey{}, o)
}

// originOf reads the invocation's origin. Outside Lambda (tests) there is
// no ARN and, unless WithOrigin gave one, the zero origin compares nothing.
func originOf(ctx context.Context) origin {
	lc, ok := lambdacontext.FromContext(ctx)
	if !ok || lc.InvokedFunctionArn == "" {
		o, _ := ctx.Value(originKey{}).(event.Origin)
		return origin{Origin: o}
	}
	o, err := event.OriginFromFunctionARN(lc.InvokedFunctionArn)
	if err != nil {
		return origin{err: fmt.Errorf("reading the invocation's function ARN: %w", err)}
	}
	return origin{Origin: o}
}

// admit decides whether a parsed message may be acted on: its shape must be
// accepted, an SNS notification's topic must be the deployment's, and each
// interruption must come from the function's account and region and not
// be dated in the future. perr is Parse's error; a
// refused shape is reported before it, being the more useful reason.
func (h *Handler) admit(parsed event.Parsed, perr error, o origin) error {
	if err := event.CheckShape(parsed.Shape, h.opts.Accept); err != nil {
		return err
	}
	if perr != nil {
		return perr
	}
	if err := event.CheckTopic(parsed.Topic, h.opts.Topics, o.Origin); err != nil {
		return err
	}
	for _, in := range parsed.Interruptions {
		if err := event.CheckOrigin(in, o.Origin); err != nil {
			return err
		}
		if err := event.CheckNotFuture(in, h.opts.Now()); err != nil {
			return err
		}
	}
	return nil
}
