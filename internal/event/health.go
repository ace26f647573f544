package event

import (
	"encoding/json"
	"strings"
)

// healthDetail is the part of an AWS Health event Drainpipe reads.
type healthDetail struct {
	Service           string `json:"service"`
	EventTypeCode     string `json:"eventTypeCode"`
	EventTypeCategory string `json:"eventTypeCategory"`
	StartTime         string `json:"startTime"`
	AffectedEntities  []struct {
		EntityValue string `json:"entityValue"`
	} `json:"affectedEntities"`
}

// parseHealth turns an EC2 scheduled change (retirement, maintenance,
// reboot) into one interruption naming every affected instance, due at the
// scheduled start.
func parseHealth(h header, raw json.RawMessage) (Parsed, error) {
	var d healthDetail
	if err := decodeDetail(raw, &d); err != nil {
		return Parsed{}, err
	}
	if d.Service != "EC2" {
		return ignore("AWS Health event for service %q, not EC2", clip(d.Service))
	}
	if d.EventTypeCategory != "scheduledChange" {
		return ignore("AWS Health event of category %q, not scheduledChange", clip(d.EventTypeCategory))
	}
	start, err := parseTime("scheduled start time", d.StartTime)
	if err != nil {
		return Parsed{}, err
	}
	var instances []string
	seen := map[string]bool{}
	for _, e := range d.AffectedEntities {
		// EC2 Health events can also name hosts or volumes; only
		// instances have nodes. Something that claims to be an
		// instance must be a well-formed one.
		if !strings.HasPrefix(e.EntityValue, "i-") {
			continue
		}
		if err := checkInstanceID(e.EntityValue); err != nil {
			return Parsed{}, err
		}
		if !seen[e.EntityValue] {
			seen[e.EntityValue] = true
			instances = append(instances, e.EntityValue)
		}
	}
	if len(instances) == 0 {
		return ignore("AWS Health scheduled change %q names no EC2 instance", clip(d.EventTypeCode))
	}
	in := h.interruption(KindScheduledChange, instances...)
	in.Deadline = start
	in.Summary = "AWS Health scheduled change"
	if d.EventTypeCode != "" {
		in.Summary += " " + clip(d.EventTypeCode)
	}
	return act(in)
}
