package awserr

import (
	"errors"
	"log/slog"
)

// Explain logs, as an ERROR that says what to fix, a failed call of a
// class redelivery will not fix: access denied (a missing IAM permission)
// and not found (a cluster EKS does not know). The message is retried all
// the same, into the dead-letter queue: acknowledging would silently leave
// the node undrained. Other classes are not logged here.
func Explain(call string, err error, log *slog.Logger) {
	switch {
	case errors.Is(err, ErrAccessDenied):
		log.Error("AWS denied access: grant the permission; the message is retried into the dead-letter queue",
			"call", call, "error", err.Error())
	case errors.Is(err, ErrNotFound):
		log.Error("AWS does not know the resource: check the configuration; the message is retried into the dead-letter queue",
			"call", call, "error", err.Error())
	}
}
