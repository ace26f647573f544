package event

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// eventBridge builds an EventBridge event body for edge cases the
// documented examples do not cover.
func eventBridge(detailType, source, detail string) string {
	return `{"version":"0","id":"6a7e8f90-1234-4abc-8def-0123456789ab","detail-type":` + quote(detailType) + `,"source":` + quote(source) +
		`,"account":"123456789012","time":"2026-11-20T10:00:00Z","region":"eu-west-1","resources":[],"detail":` + detail + `}`
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func sns(message string) string {
	return `{"Type":"Notification","MessageId":"m-1","TopicArn":"arn:aws:sns:eu-west-1:123456789012:t","SignatureVersion":"1",` +
		`"Signature":"c2lnbmF0dXJl","SigningCertURL":"https://sns.eu-west-1.amazonaws.com/SimpleNotificationService-1.pem","Message":` + quote(message) + `}`
}

const directHook = `{"Service":"AWS Auto Scaling","Time":"2026-11-20T10:15:16Z","AccountId":"123456789012",
	"RequestId":"2b3c4d5e-6f70-4812-9a3b-4c5d6e7f8091","LifecycleActionToken":"71514b9d-6a40-4b26-8523-05e7eEXAMPLE","AutoScalingGroupName":"my-asg",
	"LifecycleHookName":"hook","EC2InstanceId":"i-0598c7d356eba48d7","LifecycleTransition":"TRANSITION"}`

func TestParseEdgeCases(t *testing.T) {
	tests := []struct {
		name       string
		body       string
		wantKind   Kind
		wantIDs    []string
		wantIgnore string
		wantReject string
	}{
		{name: "empty", body: "", wantReject: "empty body"},
		{name: "null", body: "null", wantReject: "not a JSON object"},
		{name: "array", body: `[{"detail-type":"x"}]`, wantReject: "not a JSON object"},
		{name: "trailing garbage", body: `{"Service":"AWS Auto Scaling"} x`, wantReject: "decoding message"},
		{name: "unknown shape", body: `{"hello":"world"}`, wantReject: "unrecognised message"},
		{name: "at the size limit", body: `{"pad":"` + strings.Repeat("a", MaxBodySize-10) + `"}`, wantReject: "unrecognised message"},
		{name: "scheduled event without resources", body: strings.Replace(eventBridge("Scheduled Event", "aws.events", `{}`), `"resources":[],`, "", 1), wantReject: "names 0 resources"},
		{name: "oversized", body: `{"pad":"` + strings.Repeat("a", MaxBodySize) + `"}`, wantReject: "over the 262144-byte limit"},
		{name: "empty detail-type", body: eventBridge("", "aws.ec2", `{}`), wantReject: "missing detail-type"},
		{name: "unknown detail-type from anyone", body: eventBridge("Something Else", "com.example", `{}`), wantIgnore: "not one Drainpipe handles"},
		{name: "health from ec2 source", body: eventBridge("AWS Health Event", "aws.ec2", `{}`), wantReject: `source "aws.health"`},
		{name: "lifecycle from ec2 source", body: eventBridge("EC2 Instance-terminate Lifecycle Action", "aws.ec2", `{}`), wantReject: `source "aws.autoscaling"`},
		{name: "missing detail", body: `{"id":"6a7e8f90-1234-4abc-8def-0123456789ab","detail-type":"EC2 Instance Rebalance Recommendation","source":"aws.ec2","account":"123456789012","time":"2026-11-20T10:00:00Z","region":"eu-west-1"}`, wantReject: "detail"},
		{name: "missing id", body: `{"detail-type":"EC2 Instance Rebalance Recommendation","source":"aws.ec2","account":"123456789012","time":"2026-11-20T10:00:00Z","region":"eu-west-1","detail":{}}`, wantReject: "missing event id"},
		{name: "bad time", body: strings.Replace(eventBridge("EC2 Instance Rebalance Recommendation", "aws.ec2", `{"instance-id":"i-12345678"}`), "2026-11-20T10:00:00Z", "yesterday", 1), wantReject: "malformed event time"},
		{name: "bad account", body: strings.Replace(eventBridge("EC2 Instance Rebalance Recommendation", "aws.ec2", `{"instance-id":"i-12345678"}`), "123456789012", "12345", 1), wantReject: "malformed account"},
		{name: "detail not object", body: eventBridge("EC2 Instance Rebalance Recommendation", "aws.ec2", `"i-12345678"`), wantReject: "non-object detail"},
		{name: "detail wrong type", body: eventBridge("EC2 Instance Rebalance Recommendation", "aws.ec2", `{"instance-id":42}`), wantReject: "decoding detail"},
		{name: "missing instance", body: eventBridge("EC2 Spot Instance Interruption Warning", "aws.ec2", `{}`), wantReject: "missing instance ID"},
		{name: "short instance id", body: eventBridge("EC2 Instance Rebalance Recommendation", "aws.ec2", `{"instance-id":"i-1234567"}`), wantReject: "malformed instance ID"},
		{name: "ten-digit instance id", body: eventBridge("EC2 Instance Rebalance Recommendation", "aws.ec2", `{"instance-id":"i-1234567890"}`), wantReject: "malformed instance ID"},
		{name: "state stopped", body: eventBridge("EC2 Instance State-change Notification", "aws.ec2", `{"instance-id":"i-12345678","state":"stopped"}`), wantKind: KindStateChange, wantIDs: []string{"i-12345678"}},
		{name: "state shutting-down", body: eventBridge("EC2 Instance State-change Notification", "aws.ec2", `{"instance-id":"i-12345678","state":"shutting-down"}`), wantKind: KindStateChange, wantIDs: []string{"i-12345678"}},
		{name: "state terminated", body: eventBridge("EC2 Instance State-change Notification", "aws.ec2", `{"instance-id":"i-12345678","state":"terminated"}`), wantKind: KindStateChange, wantIDs: []string{"i-12345678"}},
		{name: "state running", body: eventBridge("EC2 Instance State-change Notification", "aws.ec2", `{"instance-id":"i-12345678","state":"running"}`), wantKind: KindStateChange, wantIDs: []string{"i-12345678"}},
		{name: "state rebooting", body: eventBridge("EC2 Instance State-change Notification", "aws.ec2", `{"instance-id":"i-12345678","state":"rebooting"}`), wantIgnore: `"rebooting"`},
		{name: "state missing", body: eventBridge("EC2 Instance State-change Notification", "aws.ec2", `{"instance-id":"i-12345678"}`), wantReject: "missing state"},
		{name: "health other service", body: eventBridge("AWS Health Event", "aws.health", `{"service":"RDS","eventTypeCategory":"scheduledChange"}`), wantIgnore: `service "RDS"`},
		{name: "health hosts only", body: eventBridge("AWS Health Event", "aws.health", `{"service":"EC2","eventTypeCategory":"scheduledChange","eventTypeCode":"AWS_EC2_DEDICATED_HOST_NETWORK_MAINTENANCE_SCHEDULED","startTime":"Sat, 05 Jun 2027 15:10:09 GMT","affectedEntities":[{"entityValue":"h-0123456789abcdef0"}]}`), wantIgnore: "names no EC2 instance"},
		{name: "health bad instance", body: eventBridge("AWS Health Event", "aws.health", `{"service":"EC2","eventTypeCategory":"scheduledChange","startTime":"2027-06-05T15:10:09Z","affectedEntities":[{"entityValue":"i-nothex!"}]}`), wantReject: "names no well-formed instance: malformed instance ID"},
		{name: "health bad entity beside good", body: eventBridge("AWS Health Event", "aws.health", `{"service":"EC2","eventTypeCategory":"scheduledChange","eventTypeCode":"AWS_EC2_INSTANCE_STOP_SCHEDULED","startTime":"2027-06-05T15:10:09Z","affectedEntities":[{"entityValue":"i-nothex!"},{"entityValue":17},{"entityValue":"i-12345678"}]}`), wantKind: KindScheduledChange, wantIDs: []string{"i-12345678"}},
		{name: "health closed without start", body: eventBridge("AWS Health Event", "aws.health", `{"service":"EC2","eventTypeCategory":"scheduledChange","statusCode":"closed","affectedEntities":[{"entityValue":"i-12345678"}]}`), wantKind: KindScheduledChange, wantIDs: []string{"i-12345678"}},
		{name: "capacity reservation bad time", body: eventBridge("EC2 Capacity Reservation Instance Interruption Warning", "aws.ec2", `{"instance-id":"i-12345678","instance-termination-time":"soon"}`), wantReject: "malformed instance termination time"},
		{name: "capacity block bad id", body: eventBridge("Capacity Block Expiration Warning", "aws.ec2", `{"capacity-reservation-id":"i-12345678"}`), wantReject: "capacity reservation id"},
		{name: "capacity reservation from health", body: eventBridge("EC2 Capacity Reservation Instance Interruption Warning", "aws.health", `{}`), wantReject: `source "aws.ec2"`},
		{name: "health missing start", body: eventBridge("AWS Health Event", "aws.health", `{"service":"EC2","eventTypeCategory":"scheduledChange","affectedEntities":[{"entityValue":"i-12345678"}]}`), wantReject: "missing scheduled start time"},
		{name: "health duplicate instances", body: eventBridge("AWS Health Event", "aws.health", `{"service":"EC2","eventTypeCategory":"scheduledChange","startTime":"2027-06-05T15:10:09Z","affectedEntities":[{"entityValue":"i-12345678"},{"entityValue":"vol-0123"},{"entityValue":"i-12345678"},{"entityValue":"i-87654321"}]}`), wantKind: KindScheduledChange, wantIDs: []string{"i-12345678", "i-87654321"}},
		{name: "eventbridge terminate with launch transition", body: eventBridge("EC2 Instance-terminate Lifecycle Action", "aws.autoscaling", `{"LifecycleActionToken":"87654321-4321-4321-4321-210987654321","AutoScalingGroupName":"a","LifecycleHookName":"h","EC2InstanceId":"i-12345678","LifecycleTransition":"autoscaling:EC2_INSTANCE_LAUNCHING"}`), wantReject: "lifecycle transition"},
		{name: "direct launch hook", body: strings.Replace(directHook, "TRANSITION", "autoscaling:EC2_INSTANCE_LAUNCHING", 1), wantKind: KindASGLaunchLifecycle, wantIDs: []string{"i-0598c7d356eba48d7"}},
		{name: "eventbridge launch with terminate transition", body: eventBridge("EC2 Instance-launch Lifecycle Action", "aws.autoscaling", `{"LifecycleActionToken":"87654321-4321-4321-4321-210987654321","AutoScalingGroupName":"a","LifecycleHookName":"h","EC2InstanceId":"i-12345678","LifecycleTransition":"autoscaling:EC2_INSTANCE_TERMINATING"}`), wantReject: "lifecycle transition"},
		{name: "eventbridge launch from ec2", body: eventBridge("EC2 Instance-launch Lifecycle Action", "aws.ec2", `{}`), wantReject: `source "aws.autoscaling"`},
		{name: "direct unknown transition", body: strings.Replace(directHook, "TRANSITION", "autoscaling:SOMETHING", 1), wantReject: "unknown lifecycle transition"},
		{name: "direct wrong service", body: strings.Replace(strings.Replace(directHook, "TRANSITION", TransitionTerminating, 1), "AWS Auto Scaling", "Prankster", 1), wantReject: `from service "Prankster"`},
		{name: "direct bad hook name", body: strings.Replace(strings.Replace(directHook, "TRANSITION", TransitionTerminating, 1), `"hook"`, `"hook name with spaces"`, 1), wantReject: "malformed lifecycle hook name"},
		{name: "direct bad asg name", body: strings.Replace(strings.Replace(directHook, "TRANSITION", TransitionTerminating, 1), `"my-asg"`, `"my\u0000asg"`, 1), wantReject: "malformed Auto Scaling group name"},
		{name: "direct bad account", body: strings.Replace(strings.Replace(directHook, "TRANSITION", TransitionTerminating, 1), `"123456789012"`, `"12345"`, 1), wantReject: "malformed account"},
		{name: "direct missing request id", body: strings.Replace(strings.Replace(directHook, "TRANSITION", TransitionTerminating, 1), `"2b3c4d5e-6f70-4812-9a3b-4c5d6e7f8091"`, `""`, 1), wantReject: "RequestId"},
		{name: "asg launch report", body: `{"Service":"AWS Auto Scaling","Event":"autoscaling:EC2_INSTANCE_LAUNCH","AutoScalingGroupName":"my-asg","EC2InstanceId":"i-12345678"}`, wantIgnore: "not a lifecycle action"},
		{name: "sns wrapping direct hook", body: sns(strings.Replace(directHook, "TRANSITION", TransitionTerminating, 1)), wantKind: KindASGLifecycle, wantIDs: []string{"i-0598c7d356eba48d7"}},
		{name: "sns wrapping sns", body: sns(sns(eventBridge("EC2 Instance Rebalance Recommendation", "aws.ec2", `{"instance-id":"i-12345678"}`))), wantReject: "nested"},
		{name: "sns wrapping garbage", body: sns("not json"), wantReject: "not a JSON object"},
		{name: "sns wrapping bad source", body: sns(eventBridge("EC2 Instance Rebalance Recommendation", "aws.sns", `{"instance-id":"i-12345678"}`)), wantReject: "must come from source"},
		{name: "sns empty message", body: `{"Type":"Notification","Message":""}`, wantReject: "without a Message"},
		{name: "sns subscription confirmation", body: `{"Type":"SubscriptionConfirmation","TopicArn":"arn:aws:sns:eu-west-1:123456789012:t","Message":"confirm"}`, wantIgnore: "SubscriptionConfirmation"},
		{name: "sns other type", body: `{"Type":"Bogus","Message":"{}"}`, wantReject: `type "Bogus"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.body))
			if tt.wantKind == "" {
				checkParse(t, got, err, nil, tt.wantIgnore, tt.wantReject)
				return
			}
			if err != nil || len(got.Interruptions) != 1 {
				t.Fatalf("Parse = %+v, %v; want one interruption", got, err)
			}
			in := got.Interruptions[0]
			if in.Kind != tt.wantKind {
				t.Errorf("Kind = %q, want %q", in.Kind, tt.wantKind)
			}
			if !equalStrings(in.Instances, tt.wantIDs) {
				t.Errorf("Instances = %q, want %q", in.Instances, tt.wantIDs)
			}
		})
	}
}

func equalStrings(a, b []string) bool {
	return strings.Join(a, ",") == strings.Join(b, ",")
}

func TestLifecycleLogValueRedactsToken(t *testing.T) {
	lc := Lifecycle{ASG: "a", Hook: "h", Token: "71514b9d-6a40-4b26-8523-05e7eEXAMPLE", InstanceID: "i-12345678"}
	if got := lc.LogValue().String(); strings.Contains(got, lc.Token) {
		t.Errorf("LogValue() = %s, leaks the token", got)
	}
}

// A Scheduled Event must name exactly one EventBridge rule and come from
// aws.events; which rule is ours is the handler's to judge.
func TestParseScheduledEventEdges(t *testing.T) {
	base := string(readTestdata(t, "eventbridge-scheduled-sweep.json"))
	tests := []struct {
		name, from, to string
		wantErr        string
	}{
		{"no resources", `"resources": ["arn:aws:events:us-east-2:123456789012:rule/drainpipe-sweep"]`, `"resources": []`, "names 0 resources"},
		{"not a rule", `arn:aws:events:us-east-2:123456789012:rule/drainpipe-sweep`, `arn:aws:sqs:us-east-2:123456789012:q`, "not an EventBridge rule ARN"},
		{"forged source", `"source": "aws.events"`, `"source": "custom.app"`, `must come from source "aws.events"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := strings.Replace(base, tt.from, tt.to, 1)
			_, err := Parse([]byte(body))
			if !errors.Is(err, ErrRejected) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Parse() error = %v, want a rejection containing %q", err, tt.wantErr)
			}
		})
	}
	for _, c := range []struct {
		rule, configured string
		want             bool
	}{
		{"arn:aws:events:us-east-2:123456789012:rule/drainpipe-sweep", "arn:aws:events:us-east-2:123456789012:rule/drainpipe-sweep", true},
		{"arn:aws:events:us-east-2:123456789012:rule/drainpipe-sweep", "drainpipe-sweep", true},
		{"arn:aws:events:us-east-2:123456789012:rule/other", "drainpipe-sweep", false},
		{"arn:aws:events:us-east-2:123456789012:rule/x-drainpipe-sweep", "drainpipe-sweep", false},
		{"arn:aws:events:us-east-2:123456789012:rule/drainpipe-sweep", "", false},
	} {
		if got := SweepRuleMatches(c.rule, c.configured); got != c.want {
			t.Errorf("SweepRuleMatches(%q, %q) = %v, want %v", c.rule, c.configured, got, c.want)
		}
	}
}
