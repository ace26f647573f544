package event

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
)

// Every EC2 scheduled change takes the instance away and gets the
// configured action, except network maintenance, which AWS documents as a
// brief loss of connectivity only: that one is capped at a cordon. The
// codes are those of AWS Health's EC2 event types.
func TestHealthCodesCordonOnlyForNetworkMaintenance(t *testing.T) {
	base := readTestdata(t, "eventbridge-health-network-maintenance.json")
	const from = "AWS_EC2_INSTANCE_NETWORK_MAINTENANCE_SCHEDULED"
	for code, cordonOnly := range map[string]bool{
		"AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED":                   false,
		"AWS_EC2_INSTANCE_RETIREMENT_EXPEDITED":                   false,
		"AWS_EC2_PERSISTENT_INSTANCE_RETIREMENT_EXPEDITED":        false,
		"AWS_EC2_INSTANCE_TERMINATION_SCHEDULED":                  false,
		"AWS_EC2_INSTANCE_STOP_SCHEDULED":                         false,
		"AWS_EC2_INSTANCE_POWER_MAINTENANCE_SCHEDULED":            false,
		"AWS_EC2_PERSISTENT_INSTANCE_POWER_MAINTENANCE_SCHEDULED": false,
		"AWS_EC2_INSTANCE_REBOOT_FLEXIBLE_MAINTENANCE_SCHEDULED":  false,
		"AWS_EC2_INSTANCE_REBOOT_MAINTENANCE_SCHEDULED":           false,
		"AWS_EC2_SYSTEM_REBOOT_MAINTENANCE_SCHEDULED":             false,
		"AWS_EC2_DEDICATED_HOST_POWER_MAINTENANCE_SCHEDULED":      false,
		"AWS_EC2_INSTANCE_NETWORK_MAINTENANCE_SCHEDULED":          true,
		"AWS_EC2_DEDICATED_HOST_NETWORK_MAINTENANCE_SCHEDULED":    true,
	} {
		t.Run(code, func(t *testing.T) {
			got, err := Parse(bytes.ReplaceAll(base, []byte(from), []byte(code)))
			if err != nil || len(got.Interruptions) != 1 {
				t.Fatalf("Parse = %+v, %v; want one interruption", got, err)
			}
			if in := got.Interruptions[0]; (in.CordonOnly != "") != cordonOnly || in.Deadline.IsZero() {
				t.Errorf("CordonOnly = %q, deadline %s; want cordon only %v, a deadline", in.CordonOnly, in.Deadline, cordonOnly)
			}
		})
	}
}

// An entity may name its instance by ARN: the ID is what follows the last
// ":instance/", wherever it stands.
func TestHealthInstancesFromARNs(t *testing.T) {
	ids, bad := healthInstances([]json.RawMessage{
		json.RawMessage(`{"entityValue":"arn:aws:ec2:eu-west-1:123456789012:instance/i-12345678"}`),
		json.RawMessage(`{"entityValue":":instance/i-87654321"}`),
		json.RawMessage(`{"entityValue":"i-12345678"}`),
	}, nil)
	if want := []string{"i-12345678", "i-87654321"}; !slices.Equal(ids, want) || len(bad) != 0 {
		t.Errorf("healthInstances = %v, bad %v; want %v", ids, bad, want)
	}
	if ids, bad := healthInstances(nil, nil); len(ids) != 0 || len(bad) != 0 {
		t.Errorf("healthInstances of nothing = %v, %v", ids, bad)
	}
}
