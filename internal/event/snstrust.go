package event

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// snsDomains is each partition's DNS suffix (aws-sdk-go-v2's
// partitions.json): SNS serves its signing certificates from
// sns.<region>.<suffix> only.
var snsDomains = map[string]string{
	"aws": "amazonaws.com", "aws-us-gov": "amazonaws.com", "aws-cn": "amazonaws.com.cn", "aws-eusc": "amazonaws.eu",
	"aws-iso": "c2s.ic.gov", "aws-iso-b": "sc2s.sgov.gov", "aws-iso-e": "cloud.adc-e.uk", "aws-iso-f": "csp.hci.ic.gov",
}

// The patterns leave their length bounds to snsTopic and snsCertOK: a
// bounded repetition such as {1,256} compiles to that many copies, and
// the package's regular expressions compile at every cold start.
var (
	snsTopicARN = regexp.MustCompile(`^arn:(aws[a-z-]*):sns:([a-z0-9-]+):([0-9]{12}):([A-Za-z0-9_-]+)(\.fifo)?$`)
	snsCertPath = regexp.MustCompile(`^/SimpleNotificationService-([0-9A-Za-z]+)\.pem$`)
)

// snsTopic splits a topic ARN into the match, partition, region, account
// and name (a name of 1–256 characters, as SNS allows); nil when it is
// not one.
func snsTopic(arn string) []string {
	m := snsTopicARN.FindStringSubmatch(arn)
	if m == nil || len(m[4]) > 256 {
		return nil
	}
	return m
}

// snsCertOK reports whether path is an SNS signing certificate's: an id of
// 1–64 characters.
func snsCertOK(path string) bool {
	m := snsCertPath.FindStringSubmatch(path)
	return m != nil && len(m[1]) <= 64
}

// maxSignature bounds the base64 signature: an RSA-4096 signature is 684
// characters.
const maxSignature = 1024

// checkSNSEnvelope holds an SNS notification to what SNS itself writes: a
// topic ARN of a known partition, a signature of version 1 (SHA1) or 2
// (SHA256), and a signing certificate on SNS's own host for the topic's
// region over https. The signature is not verified (docs/security.md says
// why); a forged envelope pointing at anyone else's certificate is refused.
func checkSNSEnvelope(n snsEnvelope) error {
	m := snsTopic(n.TopicArn)
	if m == nil || snsDomains[m[1]] == "" {
		return rejectf("SNS notification with a malformed topic ARN %q", clip(n.TopicArn))
	}
	if n.SignatureVersion != "1" && n.SignatureVersion != "2" {
		return rejectf("SNS notification with signature version %q, not 1 or 2", clip(n.SignatureVersion))
	}
	if sig, err := base64.StdEncoding.DecodeString(n.Signature); err != nil || len(sig) == 0 || len(n.Signature) > maxSignature {
		return rejectf("SNS notification with a missing or malformed signature")
	}
	return checkCertURL(n.SigningCertURL, m[1], m[2])
}

// checkCertURL accepts only https://sns.<region>.<partition's domain>/
// SimpleNotificationService-<id>.pem: no user, port, query or fragment.
func checkCertURL(raw, partition, region string) error {
	host := "sns." + region + "." + snsDomains[partition]
	u, err := url.Parse(raw)
	if raw == "" || err != nil {
		return rejectf("SNS notification with a missing or malformed signing certificate URL %q", clip(raw))
	}
	if u.Scheme != "https" {
		return rejectf("SNS signing certificate URL %q is not https", clip(raw))
	}
	if u.Hostname() != host {
		return rejectf("SNS signing certificate URL %q is not SNS's host %s for the topic", clip(raw), host)
	}
	if u.User != nil || u.Port() != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || !snsCertOK(u.EscapedPath()) {
		return rejectf("SNS signing certificate URL %q is not https://%s/SimpleNotificationService-….pem", clip(raw), host)
	}
	return nil
}

// CheckTopic rejects an SNS notification whose topic is of another
// partition or account than the function's (when known), or, when the deployment lists
// its subscribed topics, not one of them. topic is Parsed.Topic: empty
// for a message that came through no topic, which passes.
func CheckTopic(topic string, topics []string, o Origin) error {
	if topic == "" {
		return nil
	}
	m := snsTopic(topic)
	if m != nil && o.Partition != "" && m[1] != o.Partition {
		return rejectf("SNS topic %q is of partition %s, not this function's %s", clip(topic), m[1], o.Partition)
	}
	if m != nil && o.Account != "" && m[3] != o.Account {
		return rejectf("SNS topic %q is of account %s, not this function's %s", clip(topic), m[3], o.Account)
	}
	if len(topics) > 0 && !slices.Contains(topics, topic) {
		return rejectf("SNS topic %q is not one of the subscribed topics (DRAINPIPE_SNS_TOPICS)", clip(topic))
	}
	return nil
}

// ParseTopics reads DRAINPIPE_SNS_TOPICS: comma-separated SNS topic ARNs.
func ParseTopics(v string) ([]string, error) {
	var out []string
	for _, part := range strings.Split(v, ",") {
		t := strings.TrimSpace(part)
		if t == "" {
			continue
		}
		if snsTopic(t) == nil {
			return nil, fmt.Errorf("%q is not an SNS topic ARN (arn:aws:sns:REGION:ACCOUNT:NAME)", clip(t))
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}
