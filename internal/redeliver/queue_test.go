package redeliver

import (
	"strings"
	"testing"
)

func TestParseARN(t *testing.T) {
	good := map[string]queue{
		"arn:aws:sqs:us-west-2:123456789012:drainpipe":                      {"arn:aws:sqs:us-west-2:123456789012:drainpipe", "us-west-2", "123456789012", "drainpipe"},
		"arn:aws:sqs:eu-west-1:123456789012:Drain_pipe-1.fifo":              {"arn:aws:sqs:eu-west-1:123456789012:Drain_pipe-1.fifo", "eu-west-1", "123456789012", "Drain_pipe-1.fifo"},
		"arn:aws-us-gov:sqs:us-gov-west-1:123456789012:drainpipe":           {"arn:aws-us-gov:sqs:us-gov-west-1:123456789012:drainpipe", "us-gov-west-1", "123456789012", "drainpipe"},
		"arn:aws-eusc:sqs:eusc-de-east-1:123456789012:drainpipe":            {"arn:aws-eusc:sqs:eusc-de-east-1:123456789012:drainpipe", "eusc-de-east-1", "123456789012", "drainpipe"},
		"arn:aws-iso-b:sqs:us-isob-east-1:123456789012:drainpipe":           {"arn:aws-iso-b:sqs:us-isob-east-1:123456789012:drainpipe", "us-isob-east-1", "123456789012", "drainpipe"},
		"arn:aws-cn:sqs:cn-north-1:123456789012:" + strings.Repeat("q", 80): {"arn:aws-cn:sqs:cn-north-1:123456789012:" + strings.Repeat("q", 80), "cn-north-1", "123456789012", strings.Repeat("q", 80)},
	}
	for arn, want := range good {
		t.Run(arn, func(t *testing.T) {
			got, err := parseARN(arn)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("parseARN = %+v, want %+v", got, want)
			}
		})
	}
	for _, arn := range []string{
		"",
		"drainpipe",
		"arn:aws:sns:us-west-2:123456789012:drainpipe",
		"arn:aws:sqs:us-west-2:123456789012",
		"arn:aws:sqs:us-west-2:123456789012:drain:pipe",
		"arn:aws:sqs::123456789012:drainpipe",
		"arn:aws:sqs:us-west-2:12345:drainpipe",
		"arn:aws:sqs:us-west-2:123456789012:drain/pipe",
		"arn:aws:sqs:us-west-2:123456789012:" + strings.Repeat("q", 81),
		"arn:AWS:sqs:us-west-2:123456789012:drainpipe",
		"https://sqs.us-west-2.amazonaws.com/123456789012/drainpipe",
	} {
		t.Run("bad "+arn, func(t *testing.T) {
			if q, err := parseARN(arn); err == nil {
				t.Errorf("parseARN(%q) = %+v, want an error", arn, q)
			}
		})
	}
}
