package event

import (
	"bytes"
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
