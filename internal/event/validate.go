package event

import (
	"regexp"
	"strings"
	"time"
	"unicode"
)

var (
	instanceIDPattern = regexp.MustCompile(`^i-[0-9a-f]{8}([0-9a-f]{9})?$`)
	accountPattern    = regexp.MustCompile(`^[0-9]{12}$`)
	// Regions of every partition: aws (us-east-1), aws-cn (cn-north-1),
	// aws-us-gov (us-gov-west-1), aws-iso* (us-iso-east-1, us-isob-east-1,
	// eu-isoe-west-1) and aws-eusc (eusc-de-east-1).
	regionPattern = regexp.MustCompile(`^[a-z]{2,4}(-[a-z]+)+-[0-9]{1,2}$`)
	// Auto Scaling's own constraints for hook names and action tokens.
	hookPattern  = pattern{regexp.MustCompile(`^[A-Za-z0-9_/-]+$`), 255}
	tokenPattern = regexp.MustCompile(`^[A-Za-z0-9-]{36}$`)
	// EventBridge event ids and Auto Scaling RequestIds are UUIDs, but
	// AWS's own documented samples are not (121345678-1234-...): an id's
	// form is no security boundary (source, account, region and the
	// claims checked against EC2 are), so any id of sane length and
	// characters is taken. Nothing else may reach logs, Kubernetes events
	// or webhooks.
	eventIDPattern = pattern{regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]*$`), 128}
)

// pattern is a regular expression with its length limit checked apart: a
// counted repetition such as {1,255} compiles to hundreds of instructions,
// paid at every cold start before the first record.
type pattern struct {
	re  *regexp.Regexp
	max int
}

func (p pattern) MatchString(s string) bool { return len(s) <= p.max && p.re.MatchString(s) }

// matcher is a *regexp.Regexp or a pattern.
type matcher interface{ MatchString(string) bool }

// ValidInstanceID reports whether id is an EC2 instance ID (i- and 8 or 17
// lowercase hex digits).
func ValidInstanceID(id string) bool { return instanceIDPattern.MatchString(id) }

func checkInstanceID(id string) error {
	if id == "" {
		return rejectf("missing instance ID")
	}
	if !ValidInstanceID(id) {
		return rejectf("malformed instance ID %q", clip(id))
	}
	return nil
}

func checkAccount(account string) error {
	if !accountPattern.MatchString(account) {
		return rejectf("malformed account %q", clip(account))
	}
	return nil
}

// ValidRegion reports whether r has the form of a region of any AWS
// partition.
func ValidRegion(r string) bool { return regionPattern.MatchString(r) }

func checkRegion(region string) error {
	if !ValidRegion(region) {
		return rejectf("malformed region %q", clip(region))
	}
	return nil
}

// checkName validates a free-form AWS name (an Auto Scaling group): present,
// at most 255 characters, printable.
func checkName(what, s string) error {
	if s == "" {
		return rejectf("missing %s", what)
	}
	if len(s) > 255 || strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return rejectf("malformed %s %q", what, clip(s))
	}
	return nil
}

func checkPattern(what, s string, re matcher) error {
	if s == "" {
		return rejectf("missing %s", what)
	}
	if !re.MatchString(s) {
		return rejectf("malformed %s %q", what, clip(s))
	}
	return nil
}

// parseTime accepts the formats AWS uses in these messages: RFC 3339
// (EventBridge, Auto Scaling) and RFC 1123 with GMT (AWS Health).
func parseTime(what, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, rejectf("missing %s", what)
	}
	for _, layout := range []string{time.RFC3339Nano, time.RFC1123, time.RFC1123Z} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, rejectf("malformed %s %q", what, clip(s))
}

// clip keeps hostile values from bloating reasons and logs.
func clip(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	return s[:max] + "..."
}
