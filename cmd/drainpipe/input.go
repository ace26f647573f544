package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// maxInput bounds one input: a Lambda SQS event is at most 6 MB.
const maxInput = 16 << 20

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

// sqsMessages reads the messages in data, whatever form an operator has
// them in: a Lambda SQS event ({"Records":[...]}), `aws sqs
// receive-message` output ({"Messages":[...]}), or a message body (an
// EventBridge event, an SNS envelope, anything else the function would
// have to reject), one document or several (NDJSON). A body becomes a
// first delivery sent at now. Input that is not JSON is one body.
func sqsMessages(data []byte, now time.Time) []events.SQSMessage {
	var out []events.SQSMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	for n := 1; ; n++ {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil { // not JSON (from here on): the function would reject it
			rest := data[dec.InputOffset():]
			if n == 1 {
				rest = data
			}
			return append(out, bodyMessage(fmt.Sprintf("local-%d", n), string(bytes.TrimSpace(rest)), now))
		}
		if recs, ok := lambdaRecords(raw); ok {
			out = append(out, recs...)
		} else if msgs, ok := receivedMessages(raw); ok {
			out = append(out, msgs...)
		} else {
			out = append(out, bodyMessage(fmt.Sprintf("local-%d", n), string(raw), now))
		}
	}
}

// bodyMessage is one record carrying body, first delivery, sent at now.
func bodyMessage(id, body string, now time.Time) events.SQSMessage {
	ms := strconv.FormatInt(now.UnixMilli(), 10)
	return events.SQSMessage{
		MessageId: id,
		Body:      body,
		Attributes: map[string]string{
			"ApproximateReceiveCount":          "1",
			"SentTimestamp":                    ms,
			"ApproximateFirstReceiveTimestamp": ms,
		},
		EventSource: "aws:sqs",
	}
}

// lambdaRecords returns the records when raw is a Lambda SQS event.
func lambdaRecords(raw []byte) ([]events.SQSMessage, bool) {
	var probe struct {
		Records []struct {
			Body        *string `json:"body"`
			EventSource string  `json:"eventSource"`
		} `json:"Records"`
	}
	if json.Unmarshal(raw, &probe) != nil || len(probe.Records) == 0 || probe.Records[0].Body == nil {
		return nil, false
	}
	var ev events.SQSEvent
	if json.Unmarshal(raw, &ev) != nil {
		return nil, false
	}
	return ev.Records, true
}

// receivedMessages returns the messages of `aws sqs receive-message`
// output (the SQS API's own field names), as Lambda would hand them over.
func receivedMessages(raw []byte) ([]events.SQSMessage, bool) {
	var probe struct {
		Messages []struct {
			MessageID     string            `json:"MessageId"`
			ReceiptHandle string            `json:"ReceiptHandle"`
			MD5OfBody     string            `json:"MD5OfBody"`
			Body          *string           `json:"Body"`
			Attributes    map[string]string `json:"Attributes"`
		} `json:"Messages"`
	}
	if json.Unmarshal(raw, &probe) != nil || len(probe.Messages) == 0 || probe.Messages[0].Body == nil {
		return nil, false
	}
	out := make([]events.SQSMessage, 0, len(probe.Messages))
	for _, m := range probe.Messages {
		body := ""
		if m.Body != nil {
			body = *m.Body
		}
		out = append(out, events.SQSMessage{MessageId: m.MessageID, ReceiptHandle: m.ReceiptHandle, Md5OfBody: m.MD5OfBody,
			Body: body, Attributes: m.Attributes, EventSource: "aws:sqs"})
	}
	return out, true
}
