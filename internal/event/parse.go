package event

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// MaxBodySize is the largest message body Parse accepts (the SQS limit
// this design assumes); anything larger is rejected unread.
const MaxBodySize = 256 << 10

// ErrRejected marks a message that is invalid: malformed JSON, a bad
// instance ID, a missing field, a source that does not match its
// detail-type. Redelivering it cannot help, so it is never retried.
var ErrRejected = errors.New("message rejected")

// Parsed is what one message body means: interruptions to act on, or the
// reason a valid message needs no action.
type Parsed struct {
	Interruptions []Interruption
	// IgnoreReason says why a valid message needs no action. It is set
	// exactly when Interruptions is empty.
	IgnoreReason string
	// Shape is the form the message arrived in (the outer one for SNS);
	// Parse sets it, rejected messages included, once the form is known.
	Shape Shape
	// Topic is the ARN of the SNS topic a notification came through
	// (checked by CheckTopic); empty for any other shape.
	Topic string
}

// Parse reads one SQS message body: an EventBridge event, an Auto Scaling
// lifecycle notification sent straight to SQS, or either of them wrapped
// in an SNS notification. An invalid body returns an error matching
// ErrRejected; Parse never panics and does no I/O.
func Parse(body []byte) (Parsed, error) {
	if len(body) > MaxBodySize {
		return Parsed{}, rejectf("body is %d bytes, over the %d-byte limit", len(body), MaxBodySize)
	}
	return parse(body, true)
}

// probe finds which shape a body has. encoding/json matches keys without
// regard to case, which is fine: no two shapes share a key.
type probe struct {
	DetailType          *string `json:"detail-type"`
	Type                *string `json:"Type"`
	Service             *string `json:"Service"`
	Event               *string `json:"Event"`
	LifecycleTransition *string `json:"LifecycleTransition"`
}

func parse(body []byte, allowSNS bool) (Parsed, error) {
	if err := requireObject(body); err != nil {
		return Parsed{}, err
	}
	var p probe
	err := json.Unmarshal(body, &p)
	if err != nil {
		return Parsed{}, rejectf("decoding message: %w", err)
	}
	var parsed Parsed
	if p.DetailType != nil {
		parsed, err = parseEventBridge(body)
		parsed.Shape = ShapeEventBridge
		return parsed, err
	}
	if p.Type != nil {
		if !allowSNS {
			return Parsed{}, rejectf("SNS notification nested inside another")
		}
		parsed, err = parseSNS(body)
		parsed.Shape = ShapeSNS
		return parsed, err
	}
	if p.Service != nil || p.Event != nil || p.LifecycleTransition != nil {
		parsed, err = parseAutoScaling(body)
		parsed.Shape = ShapeASGDirect
		return parsed, err
	}
	return Parsed{}, rejectf("unrecognised message: not an EventBridge event, an Auto Scaling notification or an SNS notification")
}

// requireObject rejects bodies that are valid JSON but not an object
// (null, arrays, strings), which json.Unmarshal into a struct would
// otherwise accept silently.
func requireObject(body []byte) error {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 {
		return rejectf("empty body")
	}
	if trimmed[0] != '{' {
		return rejectf("body is not a JSON object")
	}
	return nil
}

// ignore is a valid message that needs no action.
func ignore(format string, args ...any) (Parsed, error) {
	return Parsed{IgnoreReason: fmt.Sprintf(format, args...)}, nil
}

// act is a valid message with one interruption.
func act(in Interruption) (Parsed, error) {
	return Parsed{Interruptions: []Interruption{in}}, nil
}

func rejectf(format string, args ...any) error {
	return fmt.Errorf("%w: %w", ErrRejected, fmt.Errorf(format, args...))
}
