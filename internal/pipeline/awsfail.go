package pipeline

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/drainpipe/drainpipe/internal/awserr"
	"github.com/drainpipe/drainpipe/internal/handler"
)

// retryAWS is the result of a failed AWS call the task cannot do without.
// Every class is retried: throttling outlived the SDK's retries and may
// pass; access denied (a missing IAM permission) and not found (a cluster
// EKS does not know) are misconfigurations that redelivery will not fix,
// but acknowledging would silently leave the node undrained, so they go on
// to the dead-letter queue, with an ERROR line that says why.
func retryAWS(what string, err error, log *slog.Logger) handler.Result {
	switch {
	case errors.Is(err, awserr.ErrAccessDenied):
		log.Error("AWS denied access: grant the permission; the message is retried into the dead-letter queue",
			"call", what, "error", err.Error())
	case errors.Is(err, awserr.ErrNotFound):
		log.Error("AWS does not know the resource: check the configuration; the message is retried into the dead-letter queue",
			"call", what, "error", err.Error())
	}
	return retry(fmt.Sprintf("%s: %v", what, err))
}
