package event

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestEventIDForm: any id of sane length and characters is taken (AWS's
// own documented samples use 121345678-1234-..., no UUID); one that could
// smuggle markup or control characters into logs, Kubernetes events and
// the webhook is rejected.
func TestEventIDForm(t *testing.T) {
	rebalance := func(id string) string {
		return strings.Replace(eventBridge("EC2 Instance Rebalance Recommendation", "aws.ec2", `{"instance-id":"i-12345678"}`),
			`"id":"6a7e8f90-1234-4abc-8def-0123456789ab"`, `"id":`+quote(id), 1)
	}
	hook := func(id string) string {
		return strings.Replace(strings.Replace(directHook, "TRANSITION", TransitionTerminating, 1), `"RequestId":"2b3c4d5e-6f70-4812-9a3b-4c5d6e7f8091"`, `"RequestId":`+quote(id), 1)
	}
	for _, tt := range []struct {
		name, body string
		ok         bool
	}{
		{"eventbridge uuid", rebalance("7bf73129-1428-4cd3-a780-95db273d1602"), true},
		{"AWS Health documented sample", rebalance("121345678-1234-1234-1234-123456789012"), true},
		{"eventbridge free text", rebalance("e-1"), true},
		{"eventbridge uppercase", rebalance("7BF73129-1428-4CD3-A780-95DB273D1602"), true},
		{"eventbridge slack mention", rebalance("<!channel>"), false},
		{"eventbridge uuid with suffix", rebalance("7bf73129-1428-4cd3-a780-95db273d1602&x"), false},
		{"eventbridge newline", rebalance("a\nb"), false},
		{"eventbridge too long", rebalance(strings.Repeat("a", 129)), false},
		{"auto scaling uuid", hook("1ab3c5d7-2e4f-4a6b-8c0d-1e2f3a4b5c6d"), true},
		{"auto scaling free text", hook("r-1"), true},
		{"auto scaling space", hook("r 1"), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.body))
			switch {
			case tt.ok && err != nil:
				t.Errorf("Parse: %v, want accepted", err)
			case !tt.ok && !errors.Is(err, ErrRejected):
				t.Errorf("Parse error = %v, want a rejection", err)
			case !tt.ok && !strings.Contains(err.Error(), "id"):
				t.Errorf("rejection %q does not name the id", err)
			}
		})
	}
}

// TestShape: every message is tagged with the shape it arrived in, the
// outer one for SNS, rejected ones included, so a deployment can refuse
// the shapes it never wires.
func TestShape(t *testing.T) {
	for _, tt := range []struct {
		file string
		want Shape
	}{
		{"eventbridge-spot-interruption.json", ShapeEventBridge},
		{"eventbridge-unknown-detail-type.json", ShapeEventBridge},
		{"bad-instance-id.json", ShapeEventBridge},
		{"asg-lifecycle-terminating.json", ShapeASGDirect},
		{"asg-test-notification.json", ShapeASGDirect},
		{"sns-asg-lifecycle-terminating.json", ShapeSNS},
		{"sns-eventbridge-spot-interruption.json", ShapeSNS},
		{"bad-malformed-json.json", ""},
	} {
		got, _ := Parse(readTestdata(t, tt.file))
		if got.Shape != tt.want {
			t.Errorf("%s: Shape = %q, want %q", tt.file, got.Shape, tt.want)
		}
	}
}

func TestParseShapes(t *testing.T) {
	got, err := ParseShapes(" eventbridge, sns ")
	if err != nil || !got.Has(ShapeEventBridge) || !got.Has(ShapeSNS) || got.Has(ShapeASGDirect) {
		t.Errorf("ParseShapes = %v, %v; want eventbridge and sns only", got, err)
	}
	if _, err := ParseShapes("eventbridge,carrier-pigeon"); err == nil || !strings.Contains(err.Error(), "carrier-pigeon") {
		t.Errorf("ParseShapes(unknown) error = %v, want it named", err)
	}
	if _, err := ParseShapes(" , "); err == nil {
		t.Error("ParseShapes(empty list) accepted")
	}
	var all Shapes
	for _, s := range AllShapes() {
		if !all.Has(s) {
			t.Errorf("the zero Shapes refuses %q; unset must accept every shape", s)
		}
	}
}

func TestCheckOrigin(t *testing.T) {
	in := Interruption{Kind: KindSpotInterruption, Account: "123456789012", Region: "eu-west-1"}
	here := Origin{Account: "123456789012", Region: "eu-west-1"}
	if err := CheckOrigin(in, here); err != nil {
		t.Errorf("own account and region: %v", err)
	}
	other := in
	other.Account = "999999999999"
	if err := CheckOrigin(other, here); !errors.Is(err, ErrRejected) || !strings.Contains(err.Error(), "999999999999") {
		t.Errorf("another account: %v, want a rejection naming it", err)
	}
	other = in
	other.Region = "us-east-1"
	if err := CheckOrigin(other, here); !errors.Is(err, ErrRejected) || !strings.Contains(err.Error(), "us-east-1") {
		t.Errorf("another region: %v, want a rejection naming it", err)
	}
	// A notification Auto Scaling sends straight to SQS has no region, but
	// must name its account.
	direct := Interruption{Kind: KindASGLifecycle, Account: "123456789012"}
	if err := CheckOrigin(direct, here); err != nil {
		t.Errorf("direct hook without region: %v", err)
	}
	direct.Account = ""
	if err := CheckOrigin(direct, here); !errors.Is(err, ErrRejected) {
		t.Errorf("direct hook without account: %v, want a rejection", err)
	}
	// Unknown origin (local runs): nothing to compare with.
	if err := CheckOrigin(other, Origin{}); err != nil {
		t.Errorf("unknown origin: %v", err)
	}
}

func TestOriginFromFunctionARN(t *testing.T) {
	got, err := OriginFromFunctionARN("arn:aws:lambda:eu-west-1:123456789012:function:drainpipe:live")
	if err != nil || got != (Origin{Account: "123456789012", Region: "eu-west-1", Partition: "aws"}) {
		t.Errorf("OriginFromFunctionARN = %+v, %v", got, err)
	}
	for _, bad := range []string{"", "arn:aws:lambda:eu-west-1", "arn:aws:sqs:eu-west-1:123456789012:q", "arn:aws:lambda:eu-west-1:1234:function:f"} {
		if _, err := OriginFromFunctionARN(bad); err == nil {
			t.Errorf("OriginFromFunctionARN(%q) accepted", bad)
		}
	}
}

func TestCheckNotFuture(t *testing.T) {
	now := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		at time.Time
		ok bool
	}{
		{now.Add(-time.Hour), true},
		{now.Add(MaxFutureSkew), true},
		{now.Add(MaxFutureSkew + time.Second), false},
		{now.Add(24 * time.Hour), false},
		{time.Time{}, true}, // no time given (some direct notifications)
	} {
		err := CheckNotFuture(Interruption{Time: tt.at}, now)
		if tt.ok != (err == nil) {
			t.Errorf("event at %v: err = %v, want ok=%v", tt.at, err, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrRejected) {
			t.Errorf("event at %v: %v is not a rejection", tt.at, err)
		}
	}
}

// TestRegionsOfEveryPartition: the region forms of every partition (aws,
// aws-cn, aws-us-gov, aws-iso*, aws-eusc) are taken, in events and in the
// function's ARN; anything else is rejected.
func TestRegionsOfEveryPartition(t *testing.T) {
	for region, partition := range map[string]string{
		"us-east-1": "aws", "cn-northwest-1": "aws-cn", "us-gov-west-1": "aws-us-gov", "us-iso-east-1": "aws-iso",
		"us-isob-east-1": "aws-iso-b", "eu-isoe-west-1": "aws-iso-e", "us-isof-south-1": "aws-iso-f",
		"eusc-de-east-1": "aws-eusc",
	} {
		t.Run(region, func(t *testing.T) {
			body := strings.Replace(eventBridge("EC2 Instance Rebalance Recommendation", "aws.ec2", `{"instance-id":"i-12345678"}`),
				`"region":"eu-west-1"`, `"region":`+quote(region), 1)
			if _, err := Parse([]byte(body)); err != nil {
				t.Errorf("Parse: %v, want accepted", err)
			}
			arn := "arn:" + partition + ":lambda:" + region + ":123456789012:function:drainpipe"
			if o, err := OriginFromFunctionARN(arn); err != nil || o.Region != region {
				t.Errorf("OriginFromFunctionARN(%s) = %+v, %v; want region %s", arn, o, err, region)
			}
		})
	}
	for _, region := range []string{"", "EU-WEST-1", "eu-west", "europe-de-east-1", "eu_west_1", "eu-west-1a"} {
		if ValidRegion(region) {
			t.Errorf("ValidRegion(%q) = true, want false", region)
		}
	}
}
