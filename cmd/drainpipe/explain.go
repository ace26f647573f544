package main

import (
	"context"
	"encoding/json"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/drainpipe/drainpipe/internal/config"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/handler"
	"github.com/drainpipe/drainpipe/internal/policy"
)

// explanation is one output line: what Drainpipe makes of one message.
type explanation struct {
	MessageID string           `json:"messageId"`
	Outcome   string           `json:"outcome"` // act, return, ignore, reject or retry
	Kind      event.Kind       `json:"kind"`
	Instances []string         `json:"instances"`
	Action    policy.Action    `json:"action"`
	Deadline  string           `json:"deadline"`
	Lifecycle *event.Lifecycle `json:"lifecycle"`
	Reason    string           `json:"reason"`
}

const explainUsage = `usage: drainpipe explain [--now TIME] [--function-arn ARN] [FILE|-]...

Shows what the function would make of SQS messages, offline: it runs the
function's own handler and decisions (shape, origin, future and stale checks,
policy) with an actor that makes no call. Reads, from each FILE (standard
input when none, or '-'): a Lambda SQS event, 'aws sqs receive-message'
output, or message bodies (EventBridge events, SNS envelopes), one or
several (NDJSON). A body counts as a first delivery received at --now.
Prints one JSON line per message: messageId, outcome (act, return, ignore,
reject), kind, instances, action, deadline, lifecycle, reason. The policy is
the one DRAINPIPE_* configure.

What needs AWS (the instance's cluster tag, its node) is not checked: 'act'
means the function would look the instance up and act if it is one of its
clusters' nodes. Exits 0 whatever the verdicts, 2 on unreadable or empty
input (an empty input is explained as the function rejects an empty
message) or bad arguments, 1 when the output cannot be written.

Flags:`

// explain is `drainpipe explain`.
func explain(ctx context.Context, c cli, args []string) int {
	fs := newFlags(c, "explain", explainUsage)
	nowFlag := fs.String("now", "", "the time to judge at, RFC 3339 (default now): replays an old message as it was")
	arn := fs.String("function-arn", "", "the function's ARN: checks each event's account and region as the function does")
	inputs, code := parseArgs(fs, args)
	if code >= 0 {
		return code
	}
	var bad problems
	now := time.Now()
	if *nowFlag != "" {
		t, err := parseTime("--now", *nowFlag)
		bad.add(err != nil, "%v", err)
		now = t
	}
	if *arn != "" {
		_, err := event.OriginFromFunctionARN(*arn)
		bad.add(err != nil, "--function-arn: %v", err)
		ctx = lambdacontext.NewContext(ctx, &lambdacontext.LambdaContext{InvokedFunctionArn: *arn})
	}
	if code := bad.report(c, "explain"); code >= 0 {
		return code
	}
	s, code := start(c, "explain", startSpec{config: true})
	defer s.end()
	if code >= 0 {
		return code
	}
	cfg := s.cfg
	if len(inputs) == 0 {
		inputs = []string{"-"}
	}
	out := json.NewEncoder(c.Stdout)
	out.SetEscapeHTML(false)
	code = exitOK
	for _, name := range inputs {
		data, err := readInput(name, c.Stdin)
		if err != nil {
			code = s.fail(exitUsage, err)
			continue
		}
		msgs := sqsMessages(data, now)
		if len(msgs) == 0 {
			// Nothing to read is bad input, said as the function says it
			// of an empty SQS body: one rejected verdict.
			code = s.failf(exitUsage, "%s: empty input: no message", inputName(name))
			msgs = []events.SQSMessage{bodyMessage("local-1", "", now)}
		}
		for _, e := range judge(ctx, msgs, cfg, now) {
			if err := out.Encode(e); err != nil {
				return s.failf(exitFail, "writing: %w", err)
			}
		}
	}
	return code
}

// inputName names an input for messages.
func inputName(name string) string {
	if name == "-" {
		return "standard input"
	}
	return name
}

// judge runs msgs through the function's handler with an actor that makes
// no call, and returns one explanation per interruption (one per message
// when it has none).
func judge(ctx context.Context, msgs []events.SQSMessage, cfg config.Config, now time.Time) []explanation {
	var verdicts []handler.RecordSummary
	actor := offline{cfg: cfg, now: now}
	h := handler.New(handler.Options{
		Policy: cfg.Policy, Actor: actor, Sweeper: actor, Concurrency: 1,
		MaxEventAge: cfg.MaxEventAge, Accept: cfg.Accept, Topics: cfg.SNSTopics, SweepRule: cfg.SweepRule, Now: func() time.Time { return now },
		OnRecord: func(_ context.Context, s handler.RecordSummary) { verdicts = append(verdicts, s) },
	})
	// Handle never fails, and with no deadline every task finishes.
	_, _ = h.Handle(ctx, events.SQSEvent{Records: msgs})
	var out []explanation
	for i, m := range msgs {
		out = append(out, explainRecord(m, verdicts[i], cfg.Policy)...)
	}
	return out
}

// explainRecord spells out one record's verdict for each interruption it
// carries.
func explainRecord(m events.SQSMessage, v handler.RecordSummary, p policy.Policy) []explanation {
	base := explanation{MessageID: m.MessageId, Instances: []string{}, Action: policy.ActionNone, Reason: v.Reason}
	parsed, err := event.Parse([]byte(m.Body))
	base.Outcome = outcomeWord(v.Outcome, err == nil && allRestores(parsed.Interruptions))
	if err != nil || len(parsed.Interruptions) == 0 || v.Outcome == handler.OutcomeRejected {
		return []explanation{base}
	}
	var out []explanation
	for _, in := range parsed.Interruptions {
		e := base
		e.Kind, e.Lifecycle, e.Action = in.Kind, in.Lifecycle, p.ForInterruption(in)
		if in.Instances != nil {
			e.Instances = in.Instances
		}
		if !in.Deadline.IsZero() {
			e.Deadline = in.Deadline.UTC().Format(time.RFC3339)
		}
		out = append(out, e)
	}
	return out
}

// outcomeWord is explain's word for the handler's outcome.
func outcomeWord(outcome string, restore bool) string {
	switch outcome {
	case handler.OutcomeDone:
		if restore {
			return "return"
		}
		return "act"
	case handler.OutcomeIgnored:
		return "ignore"
	case handler.OutcomeRejected:
		return "reject"
	}
	return outcome
}

func allRestores(ins []event.Interruption) bool {
	for _, in := range ins {
		if !in.Restore {
			return false
		}
	}
	return len(ins) > 0
}
