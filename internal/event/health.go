package event

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// healthDetail is the part of an AWS Health event Drainpipe reads.
// Entities are decoded one by one so that a malformed one cannot cost the
// well-formed ones beside it.
type healthDetail struct {
	EventArn          string            `json:"eventArn"`
	Service           string            `json:"service"`
	EventTypeCode     string            `json:"eventTypeCode"`
	EventTypeCategory string            `json:"eventTypeCategory"`
	StatusCode        string            `json:"statusCode"`
	StartTime         string            `json:"startTime"`
	EndTime           string            `json:"endTime"`
	AffectedEntities  []json.RawMessage `json:"affectedEntities"`
}

// healthStatusClosed is the status of a notice that no longer threatens
// anything: cleared, cancelled or completed.
const healthStatusClosed = "closed"

// HealthConnectivityOnlyCodes are the EC2 scheduled-change codes that
// leave the instance running: AWS documents network maintenance as a brief
// loss of network connectivity, restored when the maintenance ends, with
// no stop, reboot or retirement. They are cordoned at most. Every other
// EC2 scheduledChange (retirement, expedited retirement, termination,
// stop, reboot, power maintenance: "unavailable for a brief period of time
// and then rebooted") takes the instance away and gets the configured
// action, as aws-node-termination-handler and Karpenter act on every one.
var HealthConnectivityOnlyCodes = []string{
	"AWS_EC2_INSTANCE_NETWORK_MAINTENANCE_SCHEDULED",
	"AWS_EC2_DEDICATED_HOST_NETWORK_MAINTENANCE_SCHEDULED",
}

// healthToEC2 maps an AWS Health scheduled-change code to the code of the
// EC2 scheduled event it announces (DescribeInstanceStatus's event.code):
// the sweep finds those events itself, and the two must be acted on once.
var healthToEC2 = map[string]string{
	"AWS_EC2_INSTANCE_STOP_SCHEDULED":                  "instance-stop",
	"AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED":            "instance-retirement",
	"AWS_EC2_PERSISTENT_INSTANCE_RETIREMENT_SCHEDULED": "instance-retirement",
	"AWS_EC2_INSTANCE_REBOOT_MAINTENANCE_SCHEDULED":    "instance-reboot",
	"AWS_EC2_SYSTEM_REBOOT_MAINTENANCE_SCHEDULED":      "system-reboot",
	"AWS_EC2_SYSTEM_MAINTENANCE_SCHEDULED":             "system-maintenance",
}

// parseHealth turns an EC2 scheduled change (retirement, maintenance,
// reboot) into one interruption naming every affected instance, due at the
// scheduled start; a closed notice becomes a restore for the same
// instances. The event id is the notice's ARN, the same in every update of
// one notice, so its closing can be matched with its opening.
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
	instances, bad := healthInstances(d.AffectedEntities, h.resources)
	if len(instances) == 0 {
		if len(bad) > 0 {
			return Parsed{}, rejectf("AWS Health notice names no well-formed instance: %s", strings.Join(bad, "; "))
		}
		return ignore("AWS Health scheduled change %q names no EC2 instance", clip(d.EventTypeCode))
	}
	code := clip(d.EventTypeCode)
	in := h.interruption(KindScheduledChange, instances...)
	in.ScheduledCode = healthToEC2[d.EventTypeCode]
	if d.EventArn != "" {
		// checkName bounds the ARN kept as the event id (and annotation).
		if err := checkName("Health event ARN", d.EventArn); err != nil {
			return Parsed{}, rejectf("malformed Health event ARN %q", clip(d.EventArn))
		}
		in.EventID = d.EventArn
	}
	switch {
	case d.StatusCode == healthStatusClosed:
		in.Restore = true
		in.Summary = "AWS Health notice closed " + code + ": nodes cordoned for it come back"
	case isConnectivityOnly(d.EventTypeCode):
		start, err := parseTime("scheduled start time", d.StartTime)
		if err != nil {
			return Parsed{}, err
		}
		in.Deadline = start
		in.End = windowEnd(d.EndTime, start, &in)
		in.CordonOnly = fmt.Sprintf("AWS Health code %q costs the instance its network connectivity for a while, "+
			"not the instance", code)
		in.Summary = "AWS Health scheduled change " + code + " (cordon at most: " + in.CordonOnly + ")"
	default:
		start, err := parseTime("scheduled start time", d.StartTime)
		if err != nil {
			return Parsed{}, err
		}
		in.Deadline = start
		in.Summary = "AWS Health scheduled change " + code
		in.End = windowEnd(d.EndTime, start, &in)
	}
	if len(bad) > 0 {
		in.Skipped = bad
		in.Summary += fmt.Sprintf("; %d malformed entities skipped: %s", len(bad), strings.Join(bad, "; "))
	}
	return act(in)
}

// windowEnd reads a notice's endTime, the end of its window. It is
// optional: absent, unreadable or not after start, the window's end is
// unknown (zero), and the notice stands on its start alone; an unreadable
// one is said in the summary.
func windowEnd(raw string, start time.Time, in *Interruption) time.Time {
	if raw == "" {
		return time.Time{}
	}
	end, err := parseTime("scheduled end time", raw)
	if err != nil || !end.After(start) {
		in.Summary += fmt.Sprintf(" (end time %q unreadable or not after the start: window end unknown)", clip(raw))
		return time.Time{}
	}
	return end
}

func isConnectivityOnly(code string) bool {
	return slices.Contains(HealthConnectivityOnlyCodes, code)
}

// healthInstances reads the instance IDs of a notice from its affected
// entities or, when it has none, from the event's resources. EC2 Health
// events can also name hosts or volumes; only instances have nodes. A
// malformed entry is reported in bad and skipped.
func healthInstances(entities []json.RawMessage, resources json.RawMessage) (ids, bad []string) {
	// One pass in the notice's order, so each skipped entity is named
	// where it stands: nil is an entity that is not an object.
	var values []*string
	if len(entities) > 0 {
		for _, raw := range entities {
			var e struct {
				EntityValue string `json:"entityValue"`
			}
			if err := json.Unmarshal(raw, &e); err != nil {
				values = append(values, nil)
				continue
			}
			values = append(values, &e.EntityValue)
		}
	} else {
		// resources is documented as a list; anything else (or none) names
		// nothing.
		var rs []string
		_ = json.Unmarshal(resources, &rs)
		for i := range rs {
			values = append(values, &rs[i])
		}
	}
	seen := map[string]bool{}
	for i, p := range values {
		if p == nil {
			bad = append(bad, fmt.Sprintf("entity %d is not an object with a string entityValue", i))
			continue
		}
		v := *p
		if i := strings.LastIndex(v, ":instance/"); i >= 0 {
			v = v[i+len(":instance/"):] // an instance ARN
		}
		if !strings.HasPrefix(v, "i-") {
			continue
		}
		if !ValidInstanceID(v) {
			bad = append(bad, fmt.Sprintf("malformed instance ID %q (entity %d)", clip(v), i))
			continue
		}
		if !seen[v] {
			seen[v] = true
			ids = append(ids, v)
		}
	}
	return ids, bad
}

// healthTime is AWS Health's time format (RFC 1123, GMT).
const healthTime = "Mon, 02 Jan 2006 15:04:05 GMT"

// sampleHealth is an EC2 instance retirement scheduled in s.In, AWS
// Health's most common notice that takes an instance away.
func sampleHealth(s SampleSpec, e *SampleEvent) error {
	const code = "AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED"
	start := s.Now.Add(s.In)
	e.Resources = []string{s.Instance}
	e.Detail = map[string]any{
		"eventArn":          fmt.Sprintf("arn:aws:health:%s::event/EC2/%s/%s_%s", s.Region, code, code, s.NewID()),
		"service":           "EC2",
		"eventTypeCode":     code,
		"eventTypeCategory": "scheduledChange",
		"eventScopeCode":    "ACCOUNT_SPECIFIC",
		"eventRegion":       s.Region,
		"startTime":         start.Format(healthTime),
		"endTime":           start.Add(2 * time.Hour).Format(healthTime),
		"lastUpdatedTime":   s.Now.Format(healthTime),
		"statusCode":        "upcoming",
		"eventDescription": []map[string]string{{"language": "en_US",
			"latestDescription": "EC2 has detected degradation of the underlying hardware hosting your instance. The instance will be stopped after the specified start time."}},
		"affectedEntities": []map[string]string{{"entityValue": s.Instance}},
	}
	return nil
}
