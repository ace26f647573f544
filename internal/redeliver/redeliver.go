// Package redeliver brings retried SQS messages back soon. Lambda leaves a
// record reported as a batch item failure invisible for the queue's whole
// visibility timeout (at least 6 × the function timeout: 30 minutes for a
// 5-minute function), long enough for an Auto Scaling lifecycle hook to time
// out between two attempts at a blocked drain. A Scheduler shortens each
// retried message's visibility timeout to a delay that doubles with its
// receive count, with ChangeMessageVisibilityBatch, and never longer than
// the cap its pending lifecycle hooks set (Retry.Within).
//
// Scheduling is best effort: a failure is logged and the message simply
// comes back after the queue's own visibility timeout.
package redeliver

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// MaxDelay caps the backoff: a retried drain must come back often enough
// to heartbeat its lifecycle hook, whose heartbeat timeout may be minutes.
const MaxDelay = 5 * time.Minute

// maxEntries is SQS's limit of entries in one batch request.
const maxEntries = 10

// API is the part of the SQS client a Scheduler uses.
type API interface {
	GetQueueUrl(ctx context.Context, in *sqs.GetQueueUrlInput, optFns ...func(*sqs.Options)) (*sqs.GetQueueUrlOutput, error)
	ChangeMessageVisibilityBatch(ctx context.Context, in *sqs.ChangeMessageVisibilityBatchInput, optFns ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityBatchOutput, error)
	GetQueueAttributes(ctx context.Context, in *sqs.GetQueueAttributesInput, optFns ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
}

var _ API = (*sqs.Client)(nil)

// Scheduler sets retried messages' visibility timeouts. It is safe for
// concurrent use.
type Scheduler struct {
	api   API
	delay time.Duration
	log   *slog.Logger

	mu   sync.Mutex
	urls map[string]string // queue ARN → URL, learnt once per container
}

// New returns a Scheduler whose first redelivery comes after delay (see
// Delay); a delay of 0 or less makes Schedule do nothing. log may be nil.
func New(api API, delay time.Duration, log *slog.Logger) *Scheduler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Scheduler{api: api, delay: delay, log: log, urls: map[string]string{}}
}

// Delay is how long a message retried on its receiveCount-th delivery
// stays invisible: base × 2^(receiveCount−1), at most MaxDelay, rounded up
// to whole seconds (SQS's unit). A transient fault (throttling, a budget
// about to free up) gets a quick retry; a lasting one backs off.
func Delay(base time.Duration, receiveCount int) time.Duration {
	if base <= 0 {
		return 0
	}
	d := min(base, MaxDelay)
	for i := 1; i < receiveCount && d < MaxDelay; i++ {
		d = min(2*d, MaxDelay)
	}
	return (d + time.Second - 1).Truncate(time.Second)
}

// entry is one message to delay.
type entry struct {
	msg   events.SQSMessage
	delay time.Duration
}

// Retry is a message to bring back, with how soon at the latest.
type Retry struct {
	Message events.SQSMessage
	// Within, when positive, caps the message's delay: it carries a
	// lifecycle hook left pending, which expires if nothing heartbeats it
	// within the hook's heartbeat timeout, and only a delivery does.
	Within time.Duration
}

// Schedule sets every message's visibility timeout to its Delay, cut
// to its Within (see within), with one ChangeMessageVisibilityBatch per
// queue and ten messages. The queue is the one the message's
// EventSourceARN names. With the backoff off (a delay of 0), only capped
// messages are scheduled, at their cap: the queue's own visibility timeout
// would outlive their hooks. Failures are logged at warn level and leave
// the message to the queue's own visibility timeout; ctx bounds the whole
// call.
func (s *Scheduler) Schedule(ctx context.Context, rs []Retry) {
	if len(rs) == 0 {
		return
	}
	for _, g := range s.group(ctx, rs) {
		url, err := s.queueURL(ctx, g.queue)
		if err != nil {
			s.warn(ctx, "scheduling redelivery", g.entries, slog.String("queue_arn", g.queue.arn), slog.Any("error", err))
			continue
		}
		for start := 0; start < len(g.entries); start += maxEntries {
			s.change(ctx, g.queue, url, g.entries[start:min(start+maxEntries, len(g.entries))])
		}
	}
}

// within is how long r stays away: its Delay, cut to its cap rounded down
// to whole seconds (SQS's unit) and at least one; 0 leaves it to the queue.
func (s *Scheduler) within(r Retry) time.Duration {
	d := Delay(s.delay, receiveCount(r.Message))
	if r.Within <= 0 {
		return d
	}
	limit := max(r.Within.Truncate(time.Second), time.Second)
	if d <= 0 {
		return limit
	}
	return min(d, limit)
}

// group sorts messages by queue, in the order their queues first appear,
// skipping those left to the queue and (with a warning) those that cannot
// be delayed. A message listed
// twice (SQS delivers at least once) keeps its last receipt: only the
// latest one can change the visibility.
func (s *Scheduler) group(ctx context.Context, rs []Retry) []group {
	var groups []group
	index := map[string]int{} // queue ARN → groups index
	for _, r := range rs {
		m := r.Message
		delay := s.within(r)
		if delay <= 0 {
			continue
		}
		q, err := sourceQueue(m)
		if err != nil {
			s.log.LogAttrs(ctx, slog.LevelWarn, "not scheduling redelivery",
				slog.String("message_id", m.MessageId), slog.Any("error", err))
			continue
		}
		gi, ok := index[q.arn]
		if !ok {
			gi = len(groups)
			index[q.arn] = gi
			groups = append(groups, group{queue: q})
		}
		g := &groups[gi]
		e := entry{msg: m, delay: delay}
		if i, dup := g.find(m.MessageId); dup {
			g.entries[i] = e
			continue
		}
		g.entries = append(g.entries, e)
	}
	return groups
}

// group is the messages of one queue.
type group struct {
	queue   queue
	entries []entry
}

func (g *group) find(messageID string) (int, bool) {
	for i, e := range g.entries {
		if e.msg.MessageId == messageID {
			return i, true
		}
	}
	return 0, false
}

// change sends one ChangeMessageVisibilityBatch of at most ten entries.
// Entry IDs are positions in the request: unique even when two messages
// share an ID, and within SQS's alphabet whatever the message IDs are.
func (s *Scheduler) change(ctx context.Context, q queue, url string, entries []entry) {
	in := &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(url)}
	for i, e := range entries {
		in.Entries = append(in.Entries, types.ChangeMessageVisibilityBatchRequestEntry{
			Id:                aws.String(strconv.Itoa(i)),
			ReceiptHandle:     aws.String(e.msg.ReceiptHandle),
			VisibilityTimeout: int32(e.delay / time.Second),
		})
	}
	out, err := s.api.ChangeMessageVisibilityBatch(ctx, in, q.inRegion)
	if err != nil {
		s.warn(ctx, "scheduling redelivery", entries, slog.String("queue_arn", q.arn), slog.Any("error", err))
		return
	}
	failed := map[int]types.BatchResultErrorEntry{}
	for _, f := range out.Failed {
		if i, err := strconv.Atoi(aws.ToString(f.Id)); err == nil && i >= 0 && i < len(entries) {
			failed[i] = f
		}
	}
	for i, e := range entries {
		attrs := []slog.Attr{
			slog.String("message_id", e.msg.MessageId),
			slog.Int("receive_count", receiveCount(e.msg)),
			slog.Float64("delay_s", e.delay.Seconds()),
		}
		if f, ok := failed[i]; ok {
			s.log.LogAttrs(ctx, slog.LevelWarn, "scheduling redelivery", append(attrs,
				slog.String("queue_arn", q.arn),
				slog.String("code", aws.ToString(f.Code)),
				slog.String("error", aws.ToString(f.Message)))...)
			continue
		}
		s.log.LogAttrs(ctx, slog.LevelInfo, "redelivery scheduled", attrs...)
	}
}

// warn logs one failure covering several messages.
func (s *Scheduler) warn(ctx context.Context, msg string, entries []entry, attrs ...slog.Attr) {
	ids := make([]string, len(entries))
	for i, e := range entries {
		ids[i] = e.msg.MessageId
	}
	s.log.LogAttrs(ctx, slog.LevelWarn, msg, append([]slog.Attr{slog.Any("message_ids", ids)}, attrs...)...)
}

// receiveCount reads SQS's ApproximateReceiveCount; 1 when absent.
func receiveCount(m events.SQSMessage) int {
	n, err := strconv.Atoi(m.Attributes["ApproximateReceiveCount"])
	if err != nil || n < 1 {
		return 1
	}
	return n
}
