package live

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/aws/smithy-go/logging"
)

// SDKLogger routes the AWS SDK's log messages (retries, checksum warnings)
// into log, so a process's output stays JSON lines: the SDK's default
// logger writes plain text to standard error.
func SDKLogger(log *slog.Logger) logging.Logger {
	return sdkLogger{log: log}
}

type sdkLogger struct{ log *slog.Logger }

func (l sdkLogger) Logf(c logging.Classification, format string, v ...any) {
	level := slog.LevelDebug
	if c == logging.Warn {
		level = slog.LevelWarn
	}
	l.log.Log(context.Background(), level, fmt.Sprintf(format, v...), "source", "aws-sdk")
}
