package event

import (
	"encoding/json"
	"strings"
)

// KindSweep is the periodic sweep: EventBridge's Scheduled Event from the
// stack's schedule rule, asking Drainpipe to check every node it holds
// against EC2 and repair what a lost notice left. It names no instance
// and has no policy action, so it is not in Kinds.
const KindSweep Kind = "sweep"

// detailScheduled is what an EventBridge schedule rule sends.
const detailScheduled = "Scheduled Event"

// parseScheduled reads a Scheduled Event. The rule that sent it is its
// only resource; whether that rule is Drainpipe's sweep rule is for the
// caller to judge (the rule's ARN is configuration, and Parse reads none).
func parseScheduled(h header) (Parsed, error) {
	var resources []string
	if len(h.resources) > 0 {
		if err := json.Unmarshal(h.resources, &resources); err != nil {
			return Parsed{}, rejectf("Scheduled Event resources are not a list of strings")
		}
	}
	if len(resources) != 1 {
		return Parsed{}, rejectf("Scheduled Event names %d resources, want its one rule", len(resources))
	}
	rule := resources[0]
	if !strings.HasPrefix(rule, "arn:") || !strings.Contains(rule, ":rule/") {
		return Parsed{}, rejectf("Scheduled Event resource %q is not an EventBridge rule ARN", clip(rule))
	}
	if err := checkName("Scheduled Event rule ARN", rule); err != nil {
		return Parsed{}, err
	}
	in := h.interruption(KindSweep)
	in.Instances = nil
	in.Rule = rule
	in.Summary = "sweep scheduled by " + clip(rule)
	return act(in)
}

// SweepRuleMatches reports whether rule, a Scheduled Event's resource, is
// the configured sweep rule: its full ARN, or its name (the ARN's last
// path element, rule/NAME or rule/BUS/NAME).
func SweepRuleMatches(rule, configured string) bool {
	if configured == "" || rule == "" {
		return false
	}
	if rule == configured {
		return true
	}
	return !strings.HasPrefix(configured, "arn:") && strings.HasSuffix(rule, "/"+configured)
}
