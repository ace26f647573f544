package redeliver

import (
	"context"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// MaxHold is SQS's largest visibility timeout.
const MaxHold = 12 * time.Hour

// Hold keeps one message invisible for after (at most MaxHold, rounded up
// to whole seconds): the pipeline's way of coming back to a node once a
// rebalance hold is over, instead of the retry backoff. It works whatever
// the retry delay; a failure is logged and the message comes back after
// the queue's visibility timeout, when the hold is checked again.
func (s *Scheduler) Hold(ctx context.Context, msg events.SQSMessage, after time.Duration) {
	after = min(max(after, time.Second), MaxHold)
	after = (after + time.Second - 1).Truncate(time.Second)
	q, err := sourceQueue(msg)
	if err != nil {
		s.log.LogAttrs(ctx, slog.LevelWarn, "not holding message",
			slog.String("message_id", msg.MessageId), slog.Any("error", err))
		return
	}
	e := []entry{{msg: msg, delay: after}}
	url, err := s.queueURL(ctx, q)
	if err != nil {
		s.warn(ctx, "holding message", e, slog.String("queue_arn", q.arn), slog.Any("error", err))
		return
	}
	s.change(ctx, q, url, e)
}
