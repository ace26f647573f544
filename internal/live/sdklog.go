package live

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

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
	msg := fmt.Sprintf(format, v...)
	level := slog.LevelDebug
	// Falling back to IMDSv1 is the normal course off EC2 (a laptop, CI),
	// where the missing credentials are said anyway.
	if c == logging.Warn && !strings.HasPrefix(msg, "falling back to IMDSv1") {
		level = slog.LevelWarn
	}
	l.log.Log(context.Background(), level, msg, "source", "aws-sdk")
}
