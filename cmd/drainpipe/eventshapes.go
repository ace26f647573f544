package main

import (
	"bytes"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
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

// healthTime is AWS Health's time format (RFC 1123, GMT).
const healthTime = "Mon, 02 Jan 2006 15:04:05 GMT"

// body builds the EventBridge event the spec describes, in the shapes AWS
// documents for each detail-type.
func (s eventSpec) body() ([]byte, error) {
	def, known := eventKinds[s.kind]
	if !known {
		return nil, fmt.Errorf("unknown KIND %q", s.kind)
	}
	if s.kind == "state-change" && !slices.Contains(eventStates, s.state) {
		return nil, fmt.Errorf("--state %q: want one of %s", s.state, strings.Join(eventStates, ", "))
	}
	in := def
	if s.inSet {
		if def == 0 || (s.kind == "state-change" && !shutdownState(s.state)) {
			return nil, fmt.Errorf("--in: a %s event has no deadline", s.kindLabel())
		}
		in = s.in
	}
	e := ebEvent{Version: "0", ID: newID(), Source: "aws.ec2", Account: s.account, Region: s.region,
		Time: rfc3339(s.now), Resources: []string{s.instanceARN()}}
	switch s.kind {
	case "spot", "state-change":
		// The warning (or the shutdown) comes a fixed notice before the
		// instance goes: the deadline is set by the event's time.
		if in > event.SpotNotice {
			return nil, fmt.Errorf("--in: a %s comes %s before the instance goes; --in is at most that", s.kindLabel(), event.SpotNotice)
		}
		e.Time = rfc3339(s.now.Add(in - event.SpotNotice))
		if s.kind == "spot" {
			e.DetailType = "EC2 Spot Instance Interruption Warning"
			e.Detail = map[string]string{"instance-id": s.instance, "instance-action": "terminate"}
		} else {
			e.DetailType = "EC2 Instance State-change Notification"
			e.Detail = map[string]string{"instance-id": s.instance, "state": s.state}
		}
	case "rebalance":
		e.DetailType = "EC2 Instance Rebalance Recommendation"
		e.Detail = map[string]string{"instance-id": s.instance}
	case "capacity-reservation":
		e.DetailType = "EC2 Capacity Reservation Instance Interruption Warning"
		e.Detail = map[string]string{"instance-id": s.instance, "instance-action": "terminate",
			"instance-termination-time": rfc3339(s.now.Add(in))}
	case "capacity-block":
		e.DetailType = "Capacity Block Expiration Warning"
		e.Resources = []string{fmt.Sprintf("arn:aws:ec2:%s:%s:capacity-reservation/%s", s.region, s.account, s.reservation)}
		e.Detail = map[string]string{"capacity-reservation-id": s.reservation,
			"end-date": rfc3339(s.now.Add(in + event.BlockTerminationLead))}
	case "health":
		e.DetailType, e.Source, e.Detail = "AWS Health Event", "aws.health", s.healthDetail(in)
		e.Resources = []string{s.instance}
	default: // asg-terminate, asg-launch
		e.DetailType, e.Source, e.Detail = s.lifecycle()
		e.Resources = []string{fmt.Sprintf("arn:aws:autoscaling:%s:%s:autoScalingGroup:%s:autoScalingGroupName/%s",
			s.region, s.account, newID(), s.group)}
	}
	return json.MarshalIndent(e, "", "  ")
}

func (s eventSpec) kindLabel() string {
	if s.kind == "state-change" {
		return "state-change to " + s.state
	}
	return s.kind
}

// eventStates are the EC2 states a state-change event can carry that
// Drainpipe acts on (or, pending and running, gives nodes back for).
var eventStates = []string{"stopping", "stopped", "shutting-down", "terminated", "pending", "running"}

func shutdownState(state string) bool { return state == "stopping" || state == "shutting-down" }

func (s eventSpec) instanceARN() string {
	return fmt.Sprintf("arn:aws:ec2:%s:%s:instance/%s", s.region, s.account, s.instance)
}

// healthDetail is an EC2 instance retirement scheduled in, AWS Health's
// most common notice that takes an instance away.
func (s eventSpec) healthDetail(in time.Duration) map[string]any {
	const code = "AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED"
	start := s.now.Add(in)
	return map[string]any{
		"eventArn":          fmt.Sprintf("arn:aws:health:%s::event/EC2/%s/%s_%s", s.region, code, code, newID()),
		"service":           "EC2",
		"eventTypeCode":     code,
		"eventTypeCategory": "scheduledChange",
		"eventScopeCode":    "ACCOUNT_SPECIFIC",
		"eventRegion":       s.region,
		"startTime":         start.Format(healthTime),
		"endTime":           start.Add(2 * time.Hour).Format(healthTime),
		"lastUpdatedTime":   s.now.Format(healthTime),
		"statusCode":        "upcoming",
		"eventDescription": []map[string]string{{"language": "en_US",
			"latestDescription": "EC2 has detected degradation of the underlying hardware hosting your instance. The instance will be stopped after the specified start time."}},
		"affectedEntities": []map[string]string{{"entityValue": s.instance}},
	}
}

// lifecycle is an Auto Scaling lifecycle action's detail-type, source and
// detail.
func (s eventSpec) lifecycle() (string, string, map[string]string) {
	token := s.token
	if token == "" {
		token = newID()
	}
	d := map[string]string{"LifecycleActionToken": token, "AutoScalingGroupName": s.group, "LifecycleHookName": s.hook,
		"EC2InstanceId": s.instance}
	if s.kind == "asg-launch" {
		d["LifecycleTransition"], d["Origin"], d["Destination"] = event.TransitionLaunching, "EC2", "AutoScalingGroup"
		return "EC2 Instance-launch Lifecycle Action", "aws.autoscaling", d
	}
	d["LifecycleTransition"], d["Origin"], d["Destination"] = event.TransitionTerminating, "AutoScalingGroup", "EC2"
	return "EC2 Instance-terminate Lifecycle Action", "aws.autoscaling", d
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
