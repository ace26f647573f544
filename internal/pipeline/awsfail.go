package pipeline

import (
	"fmt"
	"log/slog"

	"github.com/drainpipe/drainpipe/internal/awserr"
	"github.com/drainpipe/drainpipe/internal/handler"
)

// retryAWS is the result of a failed AWS call the task cannot do without.
// Every class is retried: throttling outlived the SDK's retries and may
// pass; the misconfigurations redelivery will not fix go on to the
// dead-letter queue with an ERROR line that says why (awserr.Explain).
func retryAWS(what string, err error, log *slog.Logger) handler.Result {
	awserr.Explain(what, err, log)
	return retry(fmt.Sprintf("%s: %v", what, err))
}
