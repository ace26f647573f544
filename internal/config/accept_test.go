package config

import (
	"strings"
	"testing"

	"github.com/drainpipe/drainpipe/internal/event"
)

func TestLoadAccept(t *testing.T) {
	got, err := Load(env(map[string]string{"DRAINPIPE_ACCEPT": "eventbridge, asg-direct"}))
	if err != nil {
		t.Fatal(err)
	}
	if !got.Accept.Has(event.ShapeEventBridge) || !got.Accept.Has(event.ShapeASGDirect) || got.Accept.Has(event.ShapeSNS) {
		t.Errorf("Accept = %v, want eventbridge and asg-direct only", got.Accept)
	}
	unset, err := Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range event.AllShapes() {
		if !unset.Accept.Has(s) {
			t.Errorf("unset DRAINPIPE_ACCEPT refuses %q", s)
		}
	}
	if _, err := Load(env(map[string]string{"DRAINPIPE_ACCEPT": "eventbridge,email"})); err == nil ||
		!strings.Contains(err.Error(), "DRAINPIPE_ACCEPT") || !strings.Contains(err.Error(), "email") {
		t.Errorf("Load(DRAINPIPE_ACCEPT=eventbridge,email) error = %v, want it named", err)
	}
}

func TestLoadSNSTopics(t *testing.T) {
	const a, b = "arn:aws:sns:eu-west-1:123456789012:a", "arn:aws-cn:sns:cn-north-1:123456789012:b"
	got, err := Load(env(map[string]string{"DRAINPIPE_SNS_TOPICS": a + ", " + b + "," + a}))
	if err != nil || strings.Join(got.SNSTopics, " ") != a+" "+b {
		t.Errorf("SNSTopics = %v, %v; want %s and %s", got.SNSTopics, err, a, b)
	}
	if _, err := Load(env(map[string]string{"DRAINPIPE_SNS_TOPICS": a + ",arn:aws:sqs:eu-west-1:123456789012:q"})); err == nil ||
		!strings.Contains(err.Error(), "DRAINPIPE_SNS_TOPICS") || !strings.Contains(err.Error(), "not an SNS topic ARN") {
		t.Errorf("Load(DRAINPIPE_SNS_TOPICS with a queue ARN) error = %v, want it named", err)
	}
}
