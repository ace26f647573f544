// Package awserr sorts AWS API errors into the few classes the orchestrator
// acts on: throttled (retry later), access denied (fix IAM; retrying will
// not help) and not found (the resource is gone; ignore). Everything else
// is left as it is.
package awserr

import (
	"errors"

	"github.com/aws/smithy-go"
)

// Error classes. Test with errors.Is on the value Classify returns.
var (
	ErrThrottled    = errors.New("aws throttled the request")
	ErrAccessDenied = errors.New("aws denied access")
	ErrNotFound     = errors.New("aws resource not found")
)

// Codes the services answer, by class. EC2, Auto Scaling (query
// protocols) and EKS (REST/JSON) each spell them differently.
var codes = map[string]error{
	"Throttling":                ErrThrottled,
	"ThrottlingException":       ErrThrottled,
	"ThrottledException":        ErrThrottled,
	"RequestLimitExceeded":      ErrThrottled,
	"RequestThrottled":          ErrThrottled,
	"RequestThrottledException": ErrThrottled,
	"TooManyRequestsException":  ErrThrottled,
	"EC2ThrottledException":     ErrThrottled,
	"SlowDown":                  ErrThrottled,

	"AccessDenied":                ErrAccessDenied,
	"AccessDeniedException":       ErrAccessDenied,
	"UnauthorizedOperation":       ErrAccessDenied,
	"UnauthorizedAccess":          ErrAccessDenied,
	"UnauthorizedException":       ErrAccessDenied,
	"AuthFailure":                 ErrAccessDenied,
	"InvalidClientTokenId":        ErrAccessDenied,
	"UnrecognizedClientException": ErrAccessDenied,

	"ResourceNotFoundException":  ErrNotFound,
	"NotFoundException":          ErrNotFound,
	"InvalidInstanceID.NotFound": ErrNotFound,
}

// classified keeps the SDK error's message and chain (errors.As still finds
// the smithy.APIError) and adds the class to it.
type classified struct {
	class error
	err   error
}

func (c *classified) Error() string   { return c.err.Error() }
func (c *classified) Unwrap() []error { return []error{c.class, c.err} }

// Classify returns err with its class attached when the API error code is
// one we know, and err unchanged otherwise (nil stays nil). Retry wrappers
// of the SDK keep the API error in their chain, so an error that exhausted
// its retries on throttling still classifies as ErrThrottled.
func Classify(err error) error {
	if err == nil {
		return nil
	}
	if Class(err) != nil {
		return err // already classified
	}
	var api smithy.APIError
	if !errors.As(err, &api) {
		return err
	}
	class, ok := codes[api.ErrorCode()]
	if !ok {
		return err
	}
	return &classified{class: class, err: err}
}

// Class returns the class err belongs to, or nil when it has none.
func Class(err error) error {
	for _, class := range []error{ErrThrottled, ErrAccessDenied, ErrNotFound} {
		if errors.Is(err, class) {
			return class
		}
	}
	return nil
}
