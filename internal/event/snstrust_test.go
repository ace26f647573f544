package event

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// snsBody is an SNS notification as SNS delivers it to SQS, with field
// overrides ("" removes a field).
func snsBody(t *testing.T, set map[string]string) string {
	t.Helper()
	fields := map[string]string{
		"Type": "Notification", "MessageId": "m-1", "TopicArn": "arn:aws:sns:eu-west-1:123456789012:t",
		"Message":   eventBridge("EC2 Instance Rebalance Recommendation", "aws.ec2", `{"instance-id":"i-12345678"}`),
		"Timestamp": "2026-11-20T10:15:17.012Z", "SignatureVersion": "1", "Signature": "c2lnbmF0dXJl",
		"SigningCertURL": "https://sns.eu-west-1.amazonaws.com/SimpleNotificationService-9c6465fa7f48f5cacd23014631ec1136.pem",
	}
	for k, v := range set {
		fields[k] = v
	}
	var parts []string
	for k, v := range fields {
		if v != "" {
			parts = append(parts, quote(k)+":"+quote(v))
		}
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// TestSNSEnvelopeChecked: an SNS notification is taken only with a
// well-formed topic ARN, a signature of a version SNS uses, and a
// certificate URL on SNS's own host for the topic's region and partition
// over https; its topic is reported for the handler to check.
func TestSNSEnvelopeChecked(t *testing.T) {
	for _, tt := range []struct {
		name   string
		set    map[string]string
		reject string // "" for accepted
	}{
		{"genuine", nil, ""},
		{"signature version 2", map[string]string{"SignatureVersion": "2"}, ""},
		{"china", map[string]string{"TopicArn": "arn:aws-cn:sns:cn-north-1:123456789012:t",
			"SigningCertURL": "https://sns.cn-north-1.amazonaws.com.cn/SimpleNotificationService-3250158c6b1ba6a2f7c0c4d76e4c8e9f.pem"}, ""},
		{"govcloud", map[string]string{"TopicArn": "arn:aws-us-gov:sns:us-gov-west-1:123456789012:t",
			"SigningCertURL": "https://sns.us-gov-west-1.amazonaws.com/SimpleNotificationService-0123abcd.pem"}, ""},
		{"no topic", map[string]string{"TopicArn": ""}, "topic ARN"},
		{"topic not sns", map[string]string{"TopicArn": "arn:aws:sqs:eu-west-1:123456789012:t"}, "topic ARN"},
		{"topic wildcard", map[string]string{"TopicArn": "arn:aws:sns:eu-west-1:123456789012:*"}, "topic ARN"},
		{"no certificate", map[string]string{"SigningCertURL": ""}, "certificate URL"},
		{"attacker's certificate", map[string]string{"SigningCertURL": "https://attacker.example/SimpleNotificationService-1.pem"}, "not SNS's host sns.eu-west-1.amazonaws.com"},
		{"look-alike host", map[string]string{"SigningCertURL": "https://sns.eu-west-1.amazonaws.com.attacker.example/SimpleNotificationService-1.pem"}, "not SNS's host"},
		{"other region's host", map[string]string{"SigningCertURL": "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-1.pem"}, "not SNS's host sns.eu-west-1.amazonaws.com"},
		{"china host for a commercial topic", map[string]string{"SigningCertURL": "https://sns.eu-west-1.amazonaws.com.cn/SimpleNotificationService-1.pem"}, "not SNS's host"},
		{"plain http", map[string]string{"SigningCertURL": "http://sns.eu-west-1.amazonaws.com/SimpleNotificationService-1.pem"}, "https"},
		{"user info", map[string]string{"SigningCertURL": "https://x@sns.eu-west-1.amazonaws.com/SimpleNotificationService-1.pem"}, "certificate URL"},
		{"port", map[string]string{"SigningCertURL": "https://sns.eu-west-1.amazonaws.com:8443/SimpleNotificationService-1.pem"}, "certificate URL"},
		{"other path", map[string]string{"SigningCertURL": "https://sns.eu-west-1.amazonaws.com/../evil.pem"}, "certificate URL"},
		{"query", map[string]string{"SigningCertURL": "https://sns.eu-west-1.amazonaws.com/SimpleNotificationService-1.pem?x=1"}, "certificate URL"},
		{"unknown partition", map[string]string{"TopicArn": "arn:aws-moon:sns:eu-west-1:123456789012:t"}, "topic ARN"},
		{"no signature", map[string]string{"Signature": ""}, "signature"},
		{"signature not base64", map[string]string{"Signature": "not base64!"}, "signature"},
		{"signature version 3", map[string]string{"SignatureVersion": "3"}, "signature version"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(snsBody(t, tt.set)))
			switch {
			case tt.reject == "" && err != nil:
				t.Fatalf("Parse: %v, want accepted", err)
			case tt.reject == "":
				want := "arn:aws:sns:eu-west-1:123456789012:t"
				if v, ok := tt.set["TopicArn"]; ok {
					want = v
				}
				if got.Topic != want || len(got.Interruptions) != 1 {
					t.Errorf("Parse = topic %q, %d interruptions; want topic %q and one", got.Topic, len(got.Interruptions), want)
				}
			case !errors.Is(err, ErrRejected) || !strings.Contains(err.Error(), tt.reject):
				t.Errorf("Parse error = %v, want a rejection naming %q", err, tt.reject)
			}
		})
	}
}

// TestCheckTopic: the envelope's topic must be of the function's account
// and, when the deployment lists its topics, one of them.
func TestCheckTopic(t *testing.T) {
	own, foreign := "arn:aws:sns:eu-west-1:123456789012:t", "arn:aws:sns:eu-west-1:210987654321:t"
	origin := Origin{Account: "123456789012", Region: "eu-west-1", Partition: "aws"}
	for _, tt := range []struct {
		name   string
		topic  string
		topics []string
		origin Origin
		reject string
	}{
		{"own topic, listed", own, []string{own}, origin, ""},
		{"own topic, none listed", own, nil, origin, ""},
		{"another account's topic", foreign, nil, origin, `topic "arn:aws:sns:eu-west-1:210987654321:t" is of account 210987654321, not this function's 123456789012`},
		{"another account's topic, listed", foreign, []string{foreign}, origin, "not this function's"},
		{"unlisted topic", "arn:aws:sns:eu-west-1:123456789012:other", []string{own}, origin, "is not one of the subscribed topics (DRAINPIPE_SNS_TOPICS)"},
		// The same account id in another partition is another account.
		{"another partition's topic", "arn:aws-cn:sns:cn-north-1:123456789012:t", nil, origin,
			`topic "arn:aws-cn:sns:cn-north-1:123456789012:t" is of partition aws-cn, not this function's aws`},
		{"another partition's topic, listed", "arn:aws-us-gov:sns:us-gov-west-1:123456789012:t",
			[]string{"arn:aws-us-gov:sns:us-gov-west-1:123456789012:t"}, origin, "is of partition aws-us-gov"},
		{"local run", foreign, nil, Origin{}, ""},
		{"not sns", "", []string{own}, origin, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckTopic(tt.topic, tt.topics, tt.origin)
			switch {
			case tt.reject == "" && err != nil:
				t.Errorf("CheckTopic: %v, want nil", err)
			case tt.reject != "" && (!errors.Is(err, ErrRejected) || !strings.Contains(err.Error(), tt.reject)):
				t.Errorf("CheckTopic = %v, want a rejection containing %q", err, tt.reject)
			}
		})
	}
}

// TestSNSFixturesHaveTheirTopic: the recorded SNS notifications pass the
// envelope checks and report their topic.
func TestSNSFixturesHaveTheirTopic(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "sns-*.json"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Parse(b)
		if err != nil || !strings.HasPrefix(got.Topic, "arn:aws:sns:") {
			t.Errorf("%s: topic %q, %v", f, got.Topic, err)
		}
	}
}

// TestSNSLengthBounds holds the bounds the patterns leave to code: a topic
// name of 1–256 characters, a certificate id of 1–64.
func TestSNSLengthBounds(t *testing.T) {
	arn := func(n int) string { return "arn:aws:sns:eu-west-1:123456789012:" + strings.Repeat("t", n) }
	if snsTopic(arn(256)) == nil || snsTopic(arn(256)+".fifo") == nil {
		t.Error("a 256-character topic name refused")
	}
	if snsTopic(arn(257)) != nil || snsTopic(arn(0)) != nil {
		t.Error("a topic name of 257 or 0 characters accepted")
	}
	cert := func(n int) string { return "/SimpleNotificationService-" + strings.Repeat("a", n) + ".pem" }
	if !snsCertOK(cert(64)) || snsCertOK(cert(65)) || snsCertOK(cert(0)) {
		t.Error("certificate ids: want 1–64 characters accepted, 65 and 0 refused")
	}
}
