package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/drainpipe/drainpipe/internal/config"
)

const dlqUsage = `usage: drainpipe dlq list --queue URL [-o json] [--max N]
       drainpipe dlq redrive --queue URL [--to URL] [--resend] [--yes]

list: every message in the dead-letter queue with its age, receive count,
kind, instances and the verdict the function would give it if redriven
now (the same decision code as 'explain'). The messages are received
and made visible again at once (their receive count goes up by one).

redrive: sends the messages back to be handled. When the queue is another
SQS queue's dead-letter queue (and --to, if given, is one of those), SQS's
own message-move task does it (StartMessageMoveTask): server-side, at
SQS's pace, to be watched or cancelled with 'aws sqs
list-message-move-tasks'. Otherwise (a queue only EventBridge
dead-letters into, or --resend) each message is received, its body sent
to --to and then deleted. What a redriven message does:
docs/operations.md#redriving-the-dead-letter-queue. It says what it would
do and asks first: at a terminal it waits for y, otherwise it needs --yes.

Exits 0 when done, 1 when an SQS call fails, 2 on bad arguments or when a
redrive is not confirmed.

Flags:`

// dlqAPI is the part of SQS the dlq commands use.
type dlqAPI interface {
	ReceiveMessage(context.Context, *sqs.ReceiveMessageInput, ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	ChangeMessageVisibilityBatch(context.Context, *sqs.ChangeMessageVisibilityBatchInput, ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityBatchOutput, error)
	SendMessage(context.Context, *sqs.SendMessageInput, ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
	DeleteMessage(context.Context, *sqs.DeleteMessageInput, ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error)
	GetQueueAttributes(context.Context, *sqs.GetQueueAttributesInput, ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
	ListDeadLetterSourceQueues(context.Context, *sqs.ListDeadLetterSourceQueuesInput, ...func(*sqs.Options)) (*sqs.ListDeadLetterSourceQueuesOutput, error)
	StartMessageMoveTask(context.Context, *sqs.StartMessageMoveTaskInput, ...func(*sqs.Options)) (*sqs.StartMessageMoveTaskOutput, error)
}

// dlqTimeout bounds one dlq command.
const dlqTimeout = 2 * time.Minute

// listVisibility hides the messages being listed, so one listing sees
// each once; they are made visible again when it ends.
const listVisibility = 30

// dlqCmd is `drainpipe dlq`.
func dlqCmd(ctx context.Context, c cli, args []string) int {
	fs := newFlags(c, "dlq", dlqUsage)
	queue := fs.String("queue", "", "the dead-letter queue's URL")
	to := fs.String("to", "", "redrive: the queue to send to (default: the queue each message came from)")
	resend := fs.Bool("resend", false, "redrive: receive and resend even where SQS's move task could do it")
	output := addOutput(fs, "list: output format, json (default a table)")
	maxN := fs.Int("max", 100, "list: the most messages to list")
	yes := addYes(fs, "redrive: go ahead without asking")
	rest, code := parseArgs(fs, args)
	if code >= 0 {
		return code
	}
	var bad problems
	bad.add(len(rest) != 1 || (rest[0] != "list" && rest[0] != "redrive"), "want list or redrive, got %q", rest)
	bad.add(*queue == "", "--queue URL is required")
	bad.output(*output, "json")
	bad.add(*maxN < 1, "--max must be positive")
	if code := bad.report(c, "dlq"); code >= 0 {
		return code
	}
	s, code := start(c, "dlq", startSpec{config: true})
	defer s.end()
	if code >= 0 {
		return code
	}
	ctx, cancel := context.WithTimeout(ctx, dlqTimeout)
	defer cancel()
	if code := s.connect(ctx); code >= 0 {
		return code
	}
	client := sqs.NewFromConfig(s.aws)
	if rest[0] == "list" {
		entries, err := listDLQ(ctx, client, *queue, *maxN, s.cfg, time.Now())
		if err != nil {
			return s.fail(exitFail, err)
		}
		if err := printDLQ(c.Stdout, entries, *output == "json"); err != nil {
			return s.failf(exitFail, "writing: %w", err)
		}
		return exitOK
	}
	plan, err := planRedrive(ctx, client, *queue, *to, *resend)
	if err == nil && !confirmed(c, "dlq redrive", plan.describe(), "", *yes) {
		return exitUsage
	}
	var res redriveResult
	if err == nil {
		res, err = plan.run(ctx, client)
	}
	if res.Method != "" {
		out, _ := json.Marshal(res)
		fmt.Fprintln(c.Stdout, string(out))
	}
	if err != nil {
		return s.fail(exitCode(err), err)
	}
	return exitOK
}

// dlqEntry is one message of `drainpipe dlq list`.
type dlqEntry struct {
	MessageID    string   `json:"messageId"`
	Sent         string   `json:"sent"`
	Age          string   `json:"age"`
	ReceiveCount int      `json:"receiveCount"`
	Kind         string   `json:"kind"`
	Instances    []string `json:"instances"`
	Verdict      string   `json:"verdict"` // what the function would do if redriven now
	Reason       string   `json:"reason"`
}

// listDLQ receives up to maxN messages, judges each as the function would
// if it were redriven at now, and makes them visible again.
func listDLQ(ctx context.Context, client dlqAPI, queue string, maxN int, cfg config.Config, now time.Time) ([]dlqEntry, error) {
	var got []sqstypes.Message
	seen := map[string]bool{}
	defer release(client, queue, &got)
	for len(got) < maxN {
		out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(queue), MaxNumberOfMessages: int32(min(10, maxN-len(got))),
			VisibilityTimeout: listVisibility, MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{"All"},
		})
		if err != nil {
			return nil, fmt.Errorf("receiving from %s: %w", queue, err)
		}
		fresh := 0
		for _, m := range out.Messages {
			if id := aws.ToString(m.MessageId); !seen[id] {
				seen[id] = true
				got = append(got, m)
				fresh++
			}
		}
		if fresh == 0 {
			break
		}
	}
	entries := []dlqEntry{}
	for _, m := range got {
		// Judged as the redriven message would be: a first delivery sent now.
		id := aws.ToString(m.MessageId)
		sent := sentAt(m.Attributes[string(sqstypes.MessageSystemAttributeNameSentTimestamp)])
		count, _ := strconv.Atoi(m.Attributes[string(sqstypes.MessageSystemAttributeNameApproximateReceiveCount)])
		for _, e := range judge(ctx, []events.SQSMessage{bodyMessage(id, aws.ToString(m.Body), now)}, cfg, now) {
			entry := dlqEntry{MessageID: id, ReceiveCount: count, Kind: string(e.Kind), Instances: e.Instances,
				Verdict: e.Outcome, Reason: e.Reason}
			if !sent.IsZero() {
				entry.Sent, entry.Age = sent.UTC().Format(time.RFC3339), now.Sub(sent).Round(time.Second).String()
			}
			entries = append(entries, entry)
		}
	}
	return entries, nil
}

// release makes the listed messages visible again, ten at a time; a
// failure only delays them by listVisibility seconds.
func release(client dlqAPI, queue string, msgs *[]sqstypes.Message) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for batch := range slices.Chunk(*msgs, 10) {
		var entries []sqstypes.ChangeMessageVisibilityBatchRequestEntry
		for i, m := range batch {
			entries = append(entries, sqstypes.ChangeMessageVisibilityBatchRequestEntry{
				Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0})
		}
		_, _ = client.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(queue), Entries: entries})
	}
}

func sentAt(ms string) time.Time {
	n, err := strconv.ParseInt(ms, 10, 64)
	if err != nil || n <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(n)
}

func printDLQ(w io.Writer, entries []dlqEntry, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		return enc.Encode(entries)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MESSAGE ID\tAGE\tRECEIVES\tKIND\tINSTANCES\tIF REDRIVEN")
	for _, e := range entries {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s: %s\n", e.MessageID, orDash(e.Age), e.ReceiveCount, orDash(e.Kind),
			orDash(strings.Join(e.Instances, ",")), e.Verdict, e.Reason)
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
