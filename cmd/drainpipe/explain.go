package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/drainpipe/drainpipe/internal/config"
	"github.com/drainpipe/drainpipe/internal/event"
	"github.com/drainpipe/drainpipe/internal/policy"
)

// maxInput bounds one input: a Lambda SQS event is at most 6 MB.
const maxInput = 16 << 20

// explanation is one output line: what Drainpipe makes of one message.
type explanation struct {
	MessageID string           `json:"messageId"`
	Outcome   string           `json:"outcome"` // act, return, ignore or reject
	Kind      event.Kind       `json:"kind"`
	Instances []string         `json:"instances"`
	Action    policy.Action    `json:"action"`
	Deadline  string           `json:"deadline"`
	Lifecycle *event.Lifecycle `json:"lifecycle"`
	Reason    string           `json:"reason"`
}

// explain reads Lambda SQS events ({"Records":[...]}) or raw message bodies
// from files or standard input and prints one JSON line per message. A
// rejected message is an answer, not a failure: only unreadable input
// makes it exit non-zero.
func explain(_ context.Context, c cli, args []string) int {
	for _, a := range args {
		if a == "-h" || a == "--help" {
			fmt.Fprintln(c.Stderr, "usage: drainpipe explain [FILE|-]...\n\nReads Lambda SQS events or raw message bodies (standard input when no FILE) and prints,\nfor each message, one JSON line: messageId, outcome, kind, instances, action, deadline,\nlifecycle, reason. The policy is the one DRAINPIPE_ACTION_* configure.")
			return exitOK
		}
	}
	cfg, err := config.Load(c.Getenv)
	if err != nil {
		fmt.Fprintf(c.Stderr, "drainpipe explain: %v\n", err)
		return exitUsage
	}
	if len(args) == 0 {
		args = []string{"-"}
	}
	out := json.NewEncoder(c.Stdout)
	out.SetEscapeHTML(false)
	code := exitOK
	for _, name := range args {
		data, err := readInput(name, c.Stdin)
		if err != nil {
			fmt.Fprintf(c.Stderr, "drainpipe explain: %v\n", err)
			code = exitInput
			continue
		}
		for _, e := range explainInput(data, cfg, time.Now()) {
			if err := out.Encode(e); err != nil {
				fmt.Fprintf(c.Stderr, "drainpipe explain: writing: %v\n", err)
				return exitInput
			}
		}
	}
	return code
}

func readInput(name string, stdin io.Reader) ([]byte, error) {
	r := stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, fmt.Errorf("reading input: %w", err)
		}
		defer f.Close()
		r = f
	} else {
		name = "standard input"
	}
	data, err := io.ReadAll(io.LimitReader(r, maxInput+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if len(data) > maxInput {
		return nil, fmt.Errorf("reading %s: larger than %d bytes", name, maxInput)
	}
	return data, nil
}

// explainInput explains a Lambda SQS event record by record, or anything
// else as one raw message body.
func explainInput(data []byte, cfg config.Config, now time.Time) []explanation {
	records, ok := sqsRecords(data)
	if !ok {
		return explainBody("", []byte(data), cfg, now)
	}
	var out []explanation
	for _, r := range records {
		out = append(out, explainBody(r.MessageId, []byte(r.Body), cfg, now)...)
	}
	return out
}

// sqsRecords returns the records when data is a Lambda SQS event.
func sqsRecords(data []byte) ([]events.SQSMessage, bool) {
	var probe struct {
		Records json.RawMessage `json:"Records"`
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '{' || json.Unmarshal(trimmed, &probe) != nil {
		return nil, false
	}
	var ev events.SQSEvent
	if len(probe.Records) == 0 || probe.Records[0] != '[' || json.Unmarshal(trimmed, &ev) != nil {
		return nil, false
	}
	return ev.Records, true
}

// explainBody explains one message: one line, or one per interruption
// should a message ever carry several.
func explainBody(messageID string, body []byte, cfg config.Config, now time.Time) []explanation {
	p := cfg.Policy
	base := explanation{MessageID: messageID, Instances: []string{}, Action: policy.ActionNone}
	parsed, err := event.Parse(body)
	if err = admitOffline(parsed, err, cfg.Accept, now); err != nil {
		base.Outcome = "reject"
		base.Reason = err.Error()
		if !errors.Is(err, event.ErrRejected) {
			base.Reason = "message rejected: " + base.Reason
		}
		return []explanation{base}
	}
	if len(parsed.Interruptions) == 0 {
		base.Outcome = "ignore"
		base.Reason = parsed.IgnoreReason
		return []explanation{base}
	}
	var out []explanation
	for _, in := range parsed.Interruptions {
		e := base
		e.Kind = in.Kind
		if in.Instances != nil {
			e.Instances = in.Instances
		}
		e.Lifecycle = in.Lifecycle
		if !in.Deadline.IsZero() {
			e.Deadline = in.Deadline.UTC().Format(time.RFC3339)
		}
		e.Action = p.ForInterruption(in)
		switch {
		case in.Kind == event.KindASGLaunchLifecycle:
			e.Outcome = "act"
			e.Reason = in.Summary + "; " + launchPlan(cfg.Hooks.LaunchWaitReady)
		case in.Kind == event.KindSweep:
			e.Outcome = "sweep"
			e.Reason = in.Summary + "; when it is DRAINPIPE_SWEEP_RULE's, the function sweeps the nodes it holds (docs: Sweep)"
		case in.Restore:
			e.Outcome = "return"
			e.Reason = in.Summary + "; a node Drainpipe holds for it is given back (README: Return to service)"
		case e.Action == policy.ActionNone && in.Kind != event.KindASGLifecycle:
			e.Outcome = "ignore"
			e.Reason = policy.IgnoreReason(in.Kind)
		case e.Action == policy.ActionNone:
			e.Outcome = "act"
			e.Reason = fmt.Sprintf("%s; policy: none (%s), the hook is still completed", in.Summary, policy.Var(in.Kind))
		default:
			e.Outcome = "act"
			e.Reason = fmt.Sprintf("%s; policy: %s (%s)", in.Summary, e.Action, policy.Var(in.Kind))
			if e.Action != p.For(in.Kind) {
				e.Reason += ", capped at cordon"
			}
			if in.Reservation != "" {
				e.Reason += "; on every instance EC2 lists in " + in.Reservation
			}
		}
		out = append(out, e)
	}
	return out
}

// admitOffline applies the function's checks that need no invocation: the
// accepted shapes (reported before a parse error) and no event from the
// future. The account and region need the function's ARN, which explain
// does not have.
func admitOffline(parsed event.Parsed, perr error, accept event.Shapes, now time.Time) error {
	if err := event.CheckShape(parsed.Shape, accept); err != nil {
		return err
	}
	if perr != nil {
		return perr
	}
	for _, in := range parsed.Interruptions {
		if err := event.CheckNotFuture(in, now); err != nil {
			return err
		}
	}
	return nil
}

// launchPlan says what the function does with a launch hook: it never
// cordons or drains for one, whatever DRAINPIPE_ACTION_* say.
func launchPlan(waitReady bool) string {
	if !waitReady {
		return "completed with CONTINUE at once (DRAINPIPE_LAUNCH_WAIT_READY=false); nothing is cordoned or drained"
	}
	return "completed with CONTINUE once the instance's node is Ready in its cluster, or on the record's last " +
		"delivery (DRAINPIPE_LAUNCH_WAIT_READY); nothing is cordoned or drained"
}
