package main

import (
	"bytes"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/drainpipe/drainpipe/internal/event"
)

// ebEvent is an EventBridge event, its fields in AWS's order.
type ebEvent struct {
	Version    string   `json:"version"`
	ID         string   `json:"id"`
	DetailType string   `json:"detail-type"`
	Source     string   `json:"source"`
	Account    string   `json:"account"`
	Time       string   `json:"time"`
	Region     string   `json:"region"`
	Resources  []string `json:"resources"`
	Detail     any      `json:"detail"`
}

// body builds the EventBridge event the spec describes, in the shapes AWS
// documents for each detail-type.
func (s eventSpec) body() ([]byte, error) {
	e, err := event.WriteSample(s.kind, event.SampleSpec{Instance: s.instance, Account: s.account, Region: s.region,
		Token: s.token, Group: s.group, Hook: s.hook, State: s.state, Reservation: s.reservation,
		Now: s.now, In: s.in, InSet: s.inSet, NewID: newID})
	if err != nil {
		return nil, err
	}
	return json.MarshalIndent(ebEvent{Version: "0", ID: newID(), DetailType: e.DetailType, Source: e.Source,
		Account: s.account, Time: rfc3339(e.Time), Region: s.region, Resources: e.Resources, Detail: e.Detail}, "", "  ")
}

// sqsEvent wraps body as the Lambda SQS event the stack's queue would
// hand the function: a first delivery sent now, from a queue of the
// event's account and region.
func (s eventSpec) sqsEvent(body []byte) ([]byte, error) {
	compact, err := compactJSON(body)
	if err != nil {
		return nil, err
	}
	sum := md5.Sum([]byte(compact))
	ms := strconv.FormatInt(s.now.UnixMilli(), 10)
	ev := events.SQSEvent{Records: []events.SQSMessage{{
		MessageId:     newID(),
		ReceiptHandle: "AQEB" + randomHex(32),
		Body:          compact,
		Md5OfBody:     hex.EncodeToString(sum[:]),
		Attributes: map[string]string{"ApproximateReceiveCount": "1", "SentTimestamp": ms,
			"SenderId": "AIDAIENQZJOLO23YVJ4VO", "ApproximateFirstReceiveTimestamp": ms},
		MessageAttributes: map[string]events.SQSMessageAttribute{},
		EventSource:       "aws:sqs",
		EventSourceARN:    fmt.Sprintf("arn:aws:sqs:%s:%s:%s", s.region, s.account, s.queue),
		AWSRegion:         s.region,
	}}}
	return json.MarshalIndent(ev, "", "  ")
}

// compactJSON is b on one line, as EventBridge puts it in a message.
func compactJSON(b []byte) (string, error) {
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		return "", err
	}
	return out.String(), nil
}

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func randomHex(n int) string {
	b := make([]byte, n/2)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on Linux
	return hex.EncodeToString(b)
}

// newID is a random UUID (version 4), the form of EventBridge event ids,
// SQS message ids and lifecycle action tokens.
func newID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
